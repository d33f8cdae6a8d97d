//! SLO attainment and goodput: which requests of a run met a service-level
//! objective such as `ttft<=0.5` and `tpot<=0.05`, counted per request.
//!
//! A *request* here is one turn of a session (a session that never runs
//! `turn;` is one request, its turn 0); it is not the `request;` statement
//! of the language (§8.8), which asks an engine for work. Counting rules,
//! and why (docs/report.md, "SLO attainment"):
//!
//! * A request is every turn that began at or after warm-up (its session's
//!   creation for turn 0, its `turn;` otherwise): its *arrival*. A turn
//!   that began before warm-up is not counted, even where it observed
//!   after it, so that the count covers the measured interval only.
//! * A turn that ended (the session ran `turn;` again, or ended) without
//!   recording any of the named observations asked for nothing measured:
//!   it is not a request (the empty turn 0 of a session whose body begins
//!   with `turn;`, as multi-turn programs do).
//! * A request *attains* when it recorded every named observation and
//!   every value it recorded is within its bound; an observation recorded
//!   twice in one turn must be within its bound both times (the worst
//!   counts: a retry that met the bound does not hide one that missed it).
//! * A request that had not recorded all the named observations by the end
//!   does not attain: an overloaded deployment must not look good by never
//!   finishing its slow requests. Those still open at the end are its
//!   *unfinished* requests.
//!
//! Invariant: the requests are listed in the order they arrived (the
//! engine's order, one seed one list); hash maps only look requests up.

use std::collections::HashMap;

use super::Report;

/// One bound of an SLO: an observation, `<=` or `<`, a number.
///
/// ```
/// use serq::report::Bound;
/// let b = Bound::parse("ttft<=0.5").unwrap();
/// assert_eq!((b.observation.as_str(), b.strict, b.limit), ("ttft", false, 0.5));
/// assert!(b.holds(0.5) && !Bound::parse("ttft < 0.5").unwrap().holds(0.5));
/// assert_eq!(b.to_string(), "ttft<=0.5");
/// assert!(Bound::parse("ttft>=0.5").is_err());
/// assert!(Bound::parse("ttft<=fast").is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// The observation's name.
    pub observation: String,
    /// `<` (true) or `<=` (false).
    pub strict: bool,
    /// The bound.
    pub limit: f64,
}

impl Bound {
    /// Parses `NAME<=NUMBER` or `NAME<NUMBER` (spaces allowed around
    /// each part; the number may be `inf`); the error says what is wrong.
    pub fn parse(text: &str) -> Result<Bound, String> {
        let example = "write NAME<=NUMBER or NAME<NUMBER, e.g. 'ttft<=0.5'";
        let Some(at) = text.find('<') else {
            return Err(format!("the SLO `{text}` has no `<=` or `<`: {example}"));
        };
        let name = text[..at].trim();
        let (strict, rest) = match text[at + 1..].strip_prefix('=') {
            Some(rest) => (false, rest),
            None => (true, &text[at + 1..]),
        };
        if !crate::syntax::lexer::is_word(name) {
            return Err(format!(
                "the SLO `{text}` does not begin with an observation's name: {example}"
            ));
        }
        let limit = match rest.trim().parse::<f64>() {
            Ok(x) if !x.is_nan() => x,
            _ => {
                return Err(format!(
                    "the bound of the SLO `{text}` is not a number (`{}`): {example}",
                    rest.trim()
                ));
            }
        };
        Ok(Bound {
            observation: name.to_string(),
            strict,
            limit,
        })
    }

    /// Whether a recorded value is within the bound (NaN never is).
    pub fn holds(&self, value: f64) -> bool {
        if self.strict {
            value < self.limit
        } else {
            value <= self.limit
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = if self.strict { "<" } else { "<=" };
        write!(f, "{}{op}{}", self.observation, self.limit)
    }
}

/// A service-level objective: bounds that every request must meet jointly.
///
/// ```
/// use serq::report::Slo;
/// let source = "stage s : delay; workload { arrive batch(3); }
///               session { run s (serial + 1); observe response = now; } run { horizon 10; }";
/// let program = serq::compile_source(source, &Default::default()).unwrap();
/// let slo = Slo::parse(["response<=2"]).unwrap();
/// slo.check(&program.observes).unwrap();
/// // Responses 1, 2, 3: two of three requests attain, 2 per 10 units of time.
/// let report = slo.run(&program).unwrap();
/// let a = slo.attainment(&report).unwrap();
/// assert_eq!((a.requests, a.attained, a.unfinished), (3, 2, 0));
/// assert_eq!((a.attainment, a.goodput), (Some(2.0 / 3.0), 0.2));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Slo {
    /// The bounds, in the order given.
    pub bounds: Vec<Bound>,
}

/// An SLO that names something the program lacks.
#[derive(Clone, Debug, PartialEq)]
pub struct SloError(pub String);

impl std::fmt::Display for SloError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SloError {}

/// What the requests of one run achieved against an SLO.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attainment {
    /// attained / requests (`None` without requests).
    pub attainment: Option<f64>,
    /// Attained requests per unit of time over the measured interval.
    pub goodput: f64,
    /// The requests counted.
    pub requests: u64,
    /// Those that attained.
    pub attained: u64,
    /// Those still open at the end without all the named observations.
    pub unfinished: u64,
}

impl Attainment {
    /// `{"attainment":…,"goodput":…,"requests":…,"unfinished":…}` (an
    /// undefined attainment `null`).
    pub fn to_json(&self) -> String {
        let number = |x: Option<f64>| match x.filter(|v| v.is_finite()) {
            Some(v) => serde_json::to_string(&v).unwrap_or_else(|_| "null".to_string()),
            None => "null".to_string(),
        };
        format!(
            "{{\"attainment\":{},\"goodput\":{},\"requests\":{},\"unfinished\":{}}}",
            number(self.attainment),
            number(Some(self.goodput)),
            self.requests,
            self.unfinished
        )
    }
}

/// One request: a turn of a session, what it recorded of the SLO's
/// observations, and whether it attained.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The session's serial.
    pub session: u64,
    /// Its `turn_no` (0 before its first `turn;`).
    pub turn: u64,
    /// When the turn began.
    pub arrival: f64,
    /// For each of [`Slo::observations`], the largest value the turn
    /// recorded (NaN if it recorded one), `None` if it recorded none.
    pub values: Vec<Option<f64>>,
    /// Whether the turn ended by the end of the run.
    pub finished: bool,
    /// Whether it attained the SLO.
    pub attained: bool,
}

impl Slo {
    /// Parses each `NAME<=NUMBER` or `NAME<NUMBER`; at least one.
    pub fn parse<S: AsRef<str>>(texts: impl IntoIterator<Item = S>) -> Result<Slo, String> {
        let bounds = texts
            .into_iter()
            .map(|t| Bound::parse(t.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        if bounds.is_empty() {
            return Err("an SLO needs at least one bound, e.g. 'ttft<=0.5'".to_string());
        }
        Ok(Slo { bounds })
    }

    /// Checks that the program (its observations' names, `observes`)
    /// records every observation the SLO names; the error has a
    /// did-you-mean where a name is close.
    ///
    /// ```
    /// use serq::report::Slo;
    /// let e = Slo::parse(["tfft<=1"]).unwrap().check(&["ttft".to_string()]).unwrap_err();
    /// assert!(e.to_string().contains("did you mean `ttft`?"), "{e}");
    /// ```
    pub fn check(&self, observes: &[String]) -> Result<(), SloError> {
        for b in &self.bounds {
            if !observes.contains(&b.observation) {
                let hint =
                    match crate::link::closest(&b.observation, observes.iter().map(String::as_str))
                    {
                        Some(c) => format!("; did you mean `{c}`?"),
                        None if observes.is_empty() => "; it observes nothing".to_string(),
                        None => format!("; it observes {}", observes.join(", ")),
                    };
                return Err(SloError(format!(
                    "--slo `{b}`: the program has no observation `{}`{hint}",
                    b.observation
                )));
            }
        }
        Ok(())
    }

    /// The observations the SLO names, each once, in the order first named.
    pub fn observations(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for b in &self.bounds {
            if !out.contains(&b.observation) {
                out.push(b.observation.clone());
            }
        }
        out
    }

    /// The bounds as typed, joined with ` and `.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self.bounds.iter().map(Bound::to_string).collect();
        parts.join(" and ")
    }

    /// The run options that keep what attainment counts from (each
    /// sample's provenance and each turn's start).
    pub fn run_options<'a>() -> crate::RunOptions<'a> {
        crate::RunOptions {
            provenance: true,
            turn_marks: true,
            ..crate::RunOptions::default()
        }
    }

    /// Runs `program` keeping what [`Slo::attainment`] needs.
    pub fn run(&self, program: &crate::ValidProgram) -> Result<Report, crate::RunError> {
        crate::run_with(program, &mut Slo::run_options())
    }

    /// The requests of a run, in arrival order; `None` when the run kept
    /// no turn marks or provenance ([`Slo::run_options`]).
    pub fn requests(&self, report: &Report) -> Option<Vec<Request>> {
        let marks = report.turn_marks.as_ref()?;
        let names = self.observations();
        let mut requests: Vec<Request> = Vec::with_capacity(marks.starts.len());
        // (serial, turn) → index into `requests`; serial → its latest turn.
        let mut index: HashMap<(u64, u64), usize> = HashMap::with_capacity(marks.starts.len());
        let mut latest: HashMap<u64, usize> = HashMap::new();
        for &(session, turn, arrival) in &marks.starts {
            let i = requests.len();
            if let Some(previous) = latest.insert(session, i) {
                requests[previous].finished = true;
            }
            // A turn number met twice (a program that sets `turn_no`): the
            // samples go to the later turn, which is then the open one.
            index.insert((session, turn), i);
            requests.push(Request {
                session,
                turn,
                arrival,
                values: vec![None; names.len()],
                finished: false,
                attained: false,
            });
        }
        for &(session, _) in &marks.ends {
            if let Some(&i) = latest.get(&session) {
                requests[i].finished = true;
            }
        }
        // Whether each request's values are all within their bounds so far.
        let mut within = vec![true; requests.len()];
        for (k, name) in names.iter().enumerate() {
            let observation = report.observes.iter().find(|o| o.name == *name)?;
            let origin = observation.provenance.as_ref()?;
            let bounds: Vec<&Bound> = self
                .bounds
                .iter()
                .filter(|b| b.observation == *name)
                .collect();
            for ((&v, &session), &turn) in observation
                .samples
                .iter()
                .zip(&origin.sessions)
                .zip(&origin.turns)
            {
                // A sample of a turn that began before warm-up has no request.
                let Some(&i) = index.get(&(session, turn)) else {
                    continue;
                };
                let value = &mut requests[i].values[k];
                *value = Some(match *value {
                    Some(old) if old.is_nan() || old >= v => old,
                    _ => v,
                });
                if !bounds.iter().all(|b| b.holds(v)) {
                    within[i] = false;
                }
            }
        }
        for (r, ok) in requests.iter_mut().zip(within) {
            r.attained = ok && r.values.iter().all(Option::is_some);
        }
        // A turn that ended having recorded none of them asked for nothing.
        requests.retain(|r| !r.finished || r.values.iter().any(Option::is_some));
        Some(requests)
    }

    /// Attainment and goodput of a run; `None` as for [`Slo::requests`].
    pub fn attainment(&self, report: &Report) -> Option<Attainment> {
        let requests = self.requests(report)?;
        let attained = requests.iter().filter(|r| r.attained).count() as u64;
        let unfinished = requests
            .iter()
            .filter(|r| !r.finished && r.values.iter().any(Option::is_none))
            .count() as u64;
        let n = requests.len() as u64;
        let span = report.end - report.warmup;
        Some(Attainment {
            attainment: (n > 0).then(|| attained as f64 / n as f64),
            goodput: if span > 0.0 {
                attained as f64 / span
            } else {
                f64::NAN
            },
            requests: n,
            attained,
            unfinished,
        })
    }

    /// The requests as CSV: `session,turn,arrival`, the largest value of
    /// each named observation (empty where none was recorded),
    /// `finished`, `attained`; one row per request in arrival order.
    pub fn requests_csv(&self, report: &Report) -> Option<String> {
        let requests = self.requests(report)?;
        let mut out = String::from("session,turn,arrival");
        for name in self.observations() {
            out.push(',');
            out.push_str(&name);
        }
        out.push_str(",finished,attained\n");
        for r in &requests {
            out.push_str(&format!("{},{},{}", r.session, r.turn, r.arrival));
            for v in &r.values {
                out.push(',');
                if let Some(v) = v {
                    out.push_str(&format!("{v}"));
                }
            }
            out.push_str(&format!(",{},{}\n", r.finished, r.attained));
        }
        Some(out)
    }

    /// The text report's SLO line.
    pub fn table_line(&self, a: &Attainment) -> String {
        let attainment = a.attainment.map_or("-".to_string(), |x| format!("{x:.4}"));
        format!(
            "slo {}: attainment {attainment} ({} of {} requests, {} unfinished), goodput {:.4} per unit time\n",
            self.describe(),
            a.attained,
            a.requests,
            a.unfinished,
            a.goodput
        )
    }
}

/// A run's JSON report with `"slo": {…}` added as its last field.
///
/// ```
/// let json = serq::report::with_slo_json("{\"a\":1}", "{\"b\":2}");
/// assert_eq!(json, "{\"a\":1,\"slo\":{\"b\":2}}");
/// ```
pub fn with_slo_json(report_json: &str, slo_json: &str) -> String {
    with_field_json(report_json, "slo", slo_json)
}

/// A report's JSON with the field `name` (its value `value_json`) added last.
pub fn with_field_json(report_json: &str, name: &str, value_json: &str) -> String {
    match report_json.trim_end().strip_suffix('}') {
        Some(body) => format!("{body},\"{name}\":{value_json}}}"),
        None => report_json.to_string(),
    }
}
