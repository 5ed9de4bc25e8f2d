"""The dealer station: LEDs, buzzer and buttons through gpiozero."""
