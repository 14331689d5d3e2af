"""The commands of ``harness``, one module each: ``cmd_<name>(args, console) -> exit
code`` and ``add(sub)``, which adds its parser (``harness.cli.COMMANDS`` lists them); ``args``
holds what they share."""
