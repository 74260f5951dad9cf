"""Run with `python -m pytest tests` after `pip install -e .` (or `pip install .`)."""
import pickle

import my_package


def test_counter():
    c = my_package.Counter("c")
    assert (c.name, c.count) == ("c", 0)
    assert c.add(2) == 2 and c.count == 2
    c.count = 10
    assert my_package.Counter.starting_at("s", 5).add(1) == 6
    assert pickle.loads(pickle.dumps(c)).count == 10


def test_greet():
    assert my_package.greet("world") == "hello, world"
