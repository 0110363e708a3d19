"""Object timelines in the window: names as links, the timeline pane, back and forward."""
