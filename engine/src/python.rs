//! The `gauntlet._engine` Python module. Runs happen with the GIL released; Python polls
//! progress, may cancel, and gets every result as the same JSON the binary prints.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::plan::{Plan, PlanError};
use crate::run::{self, RunHandle};
use crate::stats::latency;

create_exception!(_engine, EngineError, PyException, "A plan or request the engine cannot carry out.");

fn engine_error(message: impl ToString) -> PyErr {
    EngineError::new_err(message.to_string())
}

impl From<PlanError> for PyErr {
    fn from(err: PlanError) -> PyErr {
        engine_error(err)
    }
}

/// One run of a plan.
#[pyclass(module = "gauntlet._engine")]
struct Run {
    plan: Plan,
    handle: OnceLock<RunHandle>,
    /// The result JSON, once the run has ended.
    result: Mutex<Option<String>>,
}

#[pymethods]
impl Run {
    #[new]
    fn new(plan_json: &str) -> PyResult<Run> {
        let plan = Plan::from_json(plan_json)?;
        plan.resolve()?;
        Ok(Run { plan, handle: OnceLock::new(), result: Mutex::new(None) })
    }

    fn start(&self) -> PyResult<()> {
        if self.handle.get().is_some() {
            return Err(engine_error("this run has already started: create a new Run"));
        }
        let handle = run::start(self.plan.clone())?;
        let _ = self.handle.set(handle);
        Ok(())
    }

    fn progress<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let Some(handle) = self.handle.get() else {
            return Err(engine_error("the run has not started: call start() first"));
        };
        let progress = handle.progress();
        dict.set_item("requests", progress.totals.requests)?;
        dict.set_item("responses", progress.totals.responses)?;
        dict.set_item("errors", progress.totals.errors)?;
        dict.set_item("bytes_in", progress.totals.bytes_in)?;
        dict.set_item("elapsed_us", progress.elapsed_us)?;
        dict.set_item("measuring", progress.measuring)?;
        Ok(dict)
    }

    fn cancel(&self) {
        if let Some(handle) = self.handle.get() {
            handle.cancel();
        }
    }

    /// The result JSON if the run ends within `timeout_s`, else None.
    fn wait(&self, py: Python<'_>, timeout_s: f64) -> PyResult<Option<String>> {
        let Some(handle) = self.handle.get() else {
            return Err(engine_error("the run has not started: call start() first"));
        };
        let mut cached = self.result.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if cached.is_none() {
            let timeout = Duration::from_secs_f64(timeout_s.max(0.0));
            if let Some(result) = py.detach(|| handle.wait_timeout(timeout)) {
                *cached = Some(serde_json::to_string(&result).map_err(engine_error)?);
            }
        }
        Ok(cached.clone())
    }
}

/// Merge encoded histograms into one, losslessly.
#[pyfunction]
fn merge_histograms(encoded: Vec<String>) -> PyResult<String> {
    latency::merge_encoded(&encoded).map_err(engine_error)
}

/// Latencies in µs at the given quantiles (0..1) of an encoded histogram.
#[pyfunction]
fn histogram_percentiles(encoded: &str, quantiles: Vec<f64>) -> PyResult<Vec<u64>> {
    let histogram = latency::decode(encoded).map_err(engine_error)?;
    if let Some(bad) = quantiles.iter().find(|q| !(0.0..=1.0).contains(*q)) {
        return Err(engine_error(format!("the quantile {bad} is outside 0..1: give quantiles such as 0.99")));
    }
    Ok(quantiles.iter().map(|&q| if histogram.is_empty() { 0 } else { histogram.value_at_quantile(q) }).collect())
}

#[pymodule(name = "_engine")]
fn engine_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("RESULT_SCHEMA", run::RESULT_SCHEMA)?;
    m.add_class::<Run>()?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_percentiles, m)?)?;
    Ok(())
}
