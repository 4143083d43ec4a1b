"""The service's JSON codec (service/jsonio.py): what it writes reads back as ``json`` would read it, exactly."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service import jsonio

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_what_it_writes_reads_back_the_same_as_with_json(value: Any) -> None:
    assert jsonio.loads(jsonio.dumpb(value)) == value
    assert jsonio.loads(jsonio.dumps(value)) == value
    assert json.loads(jsonio.dumpb(value)) == value  # and it is JSON any reader takes
    assert jsonio.loads(json.dumps(value)) == value  # it reads what json writes (blobs stored before)


def test_integers_past_64_bits_stay_exact_both_ways() -> None:
    big = 2**70 + 1  # not a double
    assert jsonio.dumps({"seed": big}) == '{"seed":1180591620717411303425}'
    assert jsonio.loads(b'{"seed": 1180591620717411303425}') == {"seed": big}
    assert jsonio.loads('[-123456789012345678901234567890]') == [-123456789012345678901234567890]


def test_text_is_utf8_and_int_keys_become_strings_as_with_json() -> None:
    assert jsonio.dumpb({"name": "Zoë", 3: [1]}) == '{"name":"Zoë","3":[1]}'.encode()
    assert jsonio.loads('{"name":"Zo\\u00eb"}') == {"name": "Zoë"}


@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b"[-Infinity, 12345678901234567890123]", b"[1e400]",
                                  b"{'a': 1}", b"\xff", b"[1,]", b""])
def test_what_is_not_json_is_a_value_error(text: bytes) -> None:
    with pytest.raises(ValueError):
        jsonio.loads(text)


def test_a_value_it_cannot_encode_goes_to_default_or_is_a_type_error() -> None:
    assert jsonio.dumps({"x": {1, 2}}, default=sorted) == '{"x":[1,2]}'
    with pytest.raises(TypeError):
        jsonio.dumps({"x": object()})
    with pytest.raises(TypeError):
        jsonio.dumps({"x": object(), "n": 2**70})  # the json fallback refuses it too


def test_floats_read_back_to_the_same_double() -> None:
    for x in (0.1, 1e16, 5e-324, 1.7976931348623157e308, -0.0):
        y = jsonio.loads(jsonio.dumpb([x]))[0]
        assert y == x and math.copysign(1, y) == math.copysign(1, x)
