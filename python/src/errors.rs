//! The package's exceptions: both are `ValueError`s (a pyserq script that
//! catches `ValueError` still catches them) whose text is the diagnostic
//! serq's CLI prints.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;

create_exception!(
    serq,
    CompileError,
    PyValueError,
    "A program that does not compile: its text is every diagnostic, with \
     its line, column, source line, caret, rule and help (as `serq check` \
     prints them)."
);

create_exception!(
    serq,
    RunError,
    PyValueError,
    "A run that stopped on a run-time error: its text names the session, \
     the clock and the statement at fault (as `serq run` prints it)."
);
