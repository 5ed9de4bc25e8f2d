"""Build output: ``mqtt.min.js`` copied here by ``python -m shoe_controller.display.build``."""
