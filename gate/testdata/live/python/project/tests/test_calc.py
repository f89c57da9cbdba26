import calc


def test_add():
    assert calc.add(2, 3) == 5


class TestCalc:
    def test_mul(self):
        assert calc.mul(4, 5) == 20

    def test_sub(self):
        assert calc.sub(7, 2) == 5
