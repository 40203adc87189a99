"""Live updates for people's screens: the workspace's event stream, read as it grows."""
