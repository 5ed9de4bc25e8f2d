"""The table display page: static HTML/CSS/JS, a tiny HTTP server, and its build step.

The page subscribes to the public feed (``<prefix>/<table>/display/state`` and
``<prefix>/<table>/status``) over MQTT-over-WebSockets with the npm package ``mqtt``,
bundled at build time (``python -m shoe_controller.display.build``); nothing is fetched
at run time. See docs/display.md.
"""
