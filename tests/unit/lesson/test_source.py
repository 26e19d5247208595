import inspect

from tfperf.lesson import source


def _factory(k):
    def scaled(x):
        """Multiply by k."""
        return x * k

    return scaled


def test_shows_the_exact_source_of_a_module_function():
    listing = source.show(source.where)
    assert inspect.getsource(source.where) in listing.code
    assert listing.code.startswith("# tfperf.lesson.source.where (source.py, line ")
    assert "tfperf.lesson.source.where" in listing.caption


def test_shows_a_nested_function_dedented():
    listing = source.show(_factory(3))
    assert 'def scaled(x):\n    """Multiply by k."""\n    return x * k\n' in listing.code
    assert "_factory.scaled" in listing.caption


def test_html_is_highlighted_and_escaped():
    html = source.show(_factory(3))._repr_html_()
    assert "<details open>" in html and "scaled" in html and "<span" in html  # pygments spans
    assert "&lt;" not in source.show(_factory(3)).caption


def test_a_tf_function_shows_the_python_function_it_wraps():
    from tfperf.runtime import logs

    tf = logs.tensorflow()
    fn = tf.function(_factory(2))
    assert "return x * k" in source.show(fn).code


def test_several_functions_in_one_listing():
    listing = source.show(source.where, source.source_of)
    assert listing.code.index("def where") < listing.code.index("def source_of")
    assert repr(listing).startswith("# Source: tfperf.lesson.source.where, tfperf.lesson.source.source_of")
