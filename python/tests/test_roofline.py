"""`use <roofline>;` resolves in Python as in the CLI: the library's text is
built into the native module, so a program given as text reaches it, and
an unknown library is a CompileError with a did-you-mean."""

import pytest

import serq

DECODE = """
use <roofline>;
stage e : step { budget 8192; cost iteration_time(1, 2, 2, 1, 0.5, 0.8, 0.002); }
workload { arrive batch(1); }
session { run e decode (1); observe t = now; }
run { horizon 1; }
"""


def test_a_program_given_as_text_reaches_the_shipped_library():
    # Llama-3.1-8B BF16 on one H100, batch 1, context 0: the weights and the
    # token's KV, (16 060 522 496 + 131 072) bytes / (3.35e12 B/s x 0.8),
    # plus the 2 ms overhead (tests/roofline.rs derives the same).
    report = serq.run(serq.compile(source=DECODE))
    expected = (16_060_522_496 + 131_072) / (3.35e12 * 0.8) + 0.002
    assert report.observe("t").samples == [pytest.approx(expected, rel=1e-12)]


def test_an_unknown_shipped_library_is_a_compile_error_with_a_did_you_mean():
    with pytest.raises(serq.CompileError) as refused:
        serq.compile(source=DECODE.replace("<roofline>", "<roofln>"))
    assert "serq ships no library `<roofln>`" in str(refused.value)
    assert "did you mean `<roofline>`?" in str(refused.value)
