from .entry import run

run()
