"""Static files of the table display page (a package only so they ship in the wheel)."""
