"""Sub-commands of `shoe-controller`, one module each (see ``shoe_controller.cli``)."""
