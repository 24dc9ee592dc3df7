"""Server drivers: start a server under test, wait until it answers, stop all its processes."""
