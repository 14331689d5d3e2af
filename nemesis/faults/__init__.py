"""The faults, one module each holding its ``FaultSpec`` (``nemesis.spec``); the registry
of them is ``nemesis.fault_registry``."""
