"""How everything looks: the theme, its colors and the icons, and the pieces more than one window shows (link
labels, banners)."""
