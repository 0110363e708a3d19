"""How everything looks: the theme, its colors and the icons."""
