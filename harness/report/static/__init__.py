"""The report's static assets (CSS and JavaScript), inlined into every page it writes."""
