"""Errors raise ValueError (CompileError, RunError) whose text is the
diagnostic serq's CLI prints: line, column, source line, caret, rule, help."""

import subprocess

import pytest

import serq
from conftest import DATA


def cli_stderr(cli, *args, status=1):
    """What `serq ARGS` prints on standard error; it fails with `status`
    (1: the program is at fault, 2: the command line)."""
    done = subprocess.run([str(cli), *args], capture_output=True, text=True)
    assert done.returncode == status, done.stdout
    return done.stderr.rstrip("\n")


def test_a_syntax_error_is_a_value_error_with_the_diagnostic_serq_check_prints(cli, tmp_path):
    path = tmp_path / "bad.sq"
    path.write_text("stage s : fifo\n")
    with pytest.raises(ValueError) as caught:
        serq.compile(path)
    assert isinstance(caught.value, serq.CompileError)
    assert str(caught.value) == cli_stderr(cli, "check", str(path))
    text = str(caught.value)
    # The rule, the place, the source line and the caret.
    assert text.startswith("error[syntax]: expected `;` after the declaration of stage `s`")
    assert f"--> {path}:2:1" in text
    assert "1 | stage s : fifo" in text
    assert "^ expected `;`" in text


def test_program_text_is_named_source_in_its_diagnostics():
    with pytest.raises(serq.CompileError) as caught:
        serq.compile(source="stage s : fifo")
    text = str(caught.value)
    assert "--> <source>:1:15" in text
    assert text.endswith("1 error(s) in <source>")


def test_an_unknown_set_names_the_declared_constants_and_helps(cli, tmp_path):
    path = tmp_path / "ok.sq"
    path.write_text(
        "let lam = 1;\nstage s : fifo;\nworkload { arrive poisson(lam); }\n"
        "session { run s (1); }\nrun { horizon 5; }\n"
    )
    with pytest.raises(serq.CompileError) as caught:
        serq.compile(path, sets={"lamm": 2})
    assert str(caught.value) == cli_stderr(cli, "check", str(path), "--set", "lamm=2", status=2)
    assert "error[set-unknown]" in str(caught.value)
    assert "= help: did you mean `lam`?" in str(caught.value)


def test_a_run_time_error_names_the_session_the_clock_and_the_statement(cli, tmp_path):
    path = tmp_path / "neg.sq"
    path.write_text(
        "stage s : delay;\nworkload { arrive batch(1); }\n"
        "session { run s (serial - 1); }\nrun { horizon 2; }\n"
    )
    program = serq.compile(path)
    with pytest.raises(ValueError) as caught:
        serq.run(program, strict=True)
    assert isinstance(caught.value, serq.RunError)
    assert str(caught.value) == cli_stderr(cli, "run", "--strict", str(path))
    assert "run-time error in session 0 at t = 0: the run's work is negative (-1)" in str(caught.value)
    assert f"--> {path}:3:11" in str(caught.value)


def test_a_computed_negative_amount_is_taken_as_zero_and_warned(tmp_path):
    # Session 0's work is -1: the run goes on, and its report counts one
    # negative amount at line 3 of the file, in session 0 at t = 0.
    path = tmp_path / "neg.sq"
    path.write_text(
        "stage s : delay;\nworkload { arrive batch(1); }\n"
        "session { run s (serial - 1); }\nrun { horizon 2; }\n"
    )
    program = serq.compile(path)
    [warning] = serq.run(program).warnings
    assert warning["kind"] == "negative_amount"
    assert (warning["count"], warning["min"]) == (1, -1.0)
    assert warning["first"]["session"] == 0 and warning["first"]["time"] == 0.0
    assert warning["first"]["statement"].endswith("neg.sq:3")
    [row] = serq.replicate(program, 2)
    assert row["warnings"] == 2
    with pytest.raises(serq.RunError):
        serq.replicate(program, 2, strict=True)


def test_a_missing_file_is_a_compile_error():
    with pytest.raises(serq.CompileError, match="cannot read `/nonexistent/x.sq`"):
        serq.compile("/nonexistent/x.sq")


def test_compile_takes_exactly_one_of_a_path_and_a_source():
    # pyserq 0.1.0's message, word for word.
    with pytest.raises(ValueError, match="^compile takes exactly one of a path and a source$"):
        serq.compile()
    with pytest.raises(ValueError, match="exactly one"):
        serq.compile(DATA / "delays.sq", source="stage s : delay;")


def test_ir_of_pyserq_version_9_is_refused_by_its_version():
    # mm1.pyserq-0.1.0.ir.json is what pyserq 0.1.0's Program.to_json()
    # wrote for examples/single-turn/mm1.sq.
    path = DATA / "mm1.pyserq-0.1.0.ir.json"
    with pytest.raises(serq.CompileError, match=r"IR version 9 \(serq reads 8\)"):
        serq.compile(path)
    with pytest.raises(serq.CompileError, match=r"IR version 9 \(serq reads 8\)"):
        serq.Program.from_json(path.read_text())
    assert serq.IR_VERSION == 8


def test_sets_on_ir_are_refused_naming_each(tmp_path):
    ir = tmp_path / "delays.json"
    ir.write_text(serq.compile(DATA / "delays.sq").to_json())
    with pytest.raises(serq.CompileError) as caught:
        serq.compile(ir, sets={"w": 2})
    assert "an override sets `w`, but IR has no `let` constants to set" in str(caught.value)
