//! The `gauntlet._engine` Python module. Runs happen with the GIL released; Python polls
//! progress, may cancel, and gets every result as the same JSON the binary prints.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::agents::{self, AgentReport};
use crate::plan::{Plan, PlanError};
use crate::run::{self, RunHandle};
use crate::server::{self, ServeConfig, ServeError, ServerHandle};
use crate::split;
use crate::stats::latency;
use crate::workload;

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

    /// The timeline's final seconds from index `start` on, as JSON (a list of timeline entries).
    fn seconds(&self, start: usize) -> PyResult<String> {
        let Some(handle) = self.handle.get() else {
            return Err(engine_error("the run has not started: call start() first"));
        };
        serde_json::to_string(&handle.seconds_from(start)).map_err(engine_error)
    }

    fn cancel(&self) {
        if let Some(handle) = self.handle.get() {
            handle.cancel();
        }
    }

    /// Block (GIL released) until the measured interval begins; its start on CLOCK_MONOTONIC in
    /// µs, or None if `timeout_s` passes first or the run is cancelled before it begins.
    fn wait_measuring(&self, py: Python<'_>, timeout_s: f64) -> PyResult<Option<u64>> {
        let Some(handle) = self.handle.get() else {
            return Err(engine_error("the run has not started: call start() first"));
        };
        let timeout = Duration::from_secs_f64(timeout_s.max(0.0));
        Ok(py.detach(|| handle.wait_measuring(timeout)))
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

/// An encoded histogram's percentile distribution (stats::latency::Distribution) as JSON: the
/// steps of HdrHistogram's percentile output, `ticks_per_half_distance` to each halving to 100 %.
#[pyfunction]
fn histogram_distribution(encoded: &str, ticks_per_half_distance: u32) -> PyResult<String> {
    if ticks_per_half_distance == 0 {
        return Err(engine_error("0 ticks per half distance reach no percentile: give 1 or more (5, as wrk2)"));
    }
    let histogram = latency::decode(encoded).map_err(engine_error)?;
    serde_json::to_string(&latency::Distribution::of(&histogram, ticks_per_half_distance)).map_err(engine_error)
}

/// The plan split into `parts` plans whose totals are exactly its own (JSON in, JSON out).
#[pyfunction]
fn split_plan(plan_json: &str, parts: usize) -> PyResult<Vec<String>> {
    let plan = Plan::from_json(plan_json)?;
    let shares = split::split_plan(&plan, parts)?;
    shares.iter().map(|share| serde_json::to_string(share).map_err(engine_error)).collect()
}

/// One result of the whole plan from its agents' reports (index, address, clock_offset_us, plan,
/// result or null, lost or null), with each agent's own figures under `agents`.
#[pyfunction]
fn merge_agents(plan_json: &str, agents_json: Vec<String>) -> PyResult<String> {
    let plan = Plan::from_json(plan_json)?;
    let agents = agents_json
        .iter()
        .map(|text| serde_json::from_str::<AgentReport>(text))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            engine_error(format!("an agent's report is not valid ({e}): pass the engine's results as they came"))
        })?;
    let merged = agents::merge_agents(&plan, &agents)?;
    serde_json::to_string(&merged).map_err(engine_error)
}

/// The built-in server, running in this process until `stop()`.
#[pyclass(module = "gauntlet._engine")]
struct Server {
    #[pyo3(get)]
    port: u16,
    #[pyo3(get)]
    host: String,
    handle: Mutex<Option<ServerHandle>>,
}

#[pymethods]
impl Server {
    #[new]
    fn new(config_json: &str) -> PyResult<Server> {
        let config: ServeConfig = serde_json::from_str(config_json)
            .map_err(|e| engine_error(format!("the server configuration is not valid: {e}")))?;
        let handle = server::serve(&config).map_err(|err| match err {
            ServeError::Tls(message) => engine_error(message),
            ServeError::Io(e) => engine_error(format!(
                "cannot serve on {}:{} ({e}): pick another port or host",
                config.host, config.port
            )),
        })?;
        let address = handle.local_addr();
        Ok(Server { port: address.port(), host: address.ip().to_string(), handle: Mutex::new(Some(handle)) })
    }

    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let guard = self.handle.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let stats = guard.as_ref().map(ServerHandle::stats).unwrap_or_default();
        let dict = PyDict::new(py);
        dict.set_item("requests", stats.requests)?;
        dict.set_item("connections_accepted", stats.connections_accepted)?;
        Ok(dict)
    }

    /// Stop serving and free the port; later calls do nothing.
    fn stop(&self, py: Python<'_>) {
        let handle = self.handle.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        if let Some(handle) = handle {
            py.detach(|| handle.stop());
        }
    }
}

/// `gauntlet serve OPTIONS` until SIGINT or SIGTERM (the GIL released): the engine's one
/// implementation of the command, its siblings started as `program` (`python -m gauntlet serve`).
#[pyfunction]
fn serve_command(py: Python<'_>, options: Vec<String>, program: Vec<String>) -> PyResult<()> {
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    py.detach(|| server::command::run(&options, &program)).map_err(engine_error)
}

/// A fresh self-signed certificate for localhost and the loopback addresses: (cert, key) PEM.
#[pyfunction]
fn self_signed_certificate() -> PyResult<(String, String)> {
    crate::conn::tls::self_signed_pem().map_err(engine_error)
}

/// The standard workload: file name -> bytes.
#[pyfunction]
fn workload_files(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    for file in workload::standard_files() {
        dict.set_item(file.name, PyBytes::new(py, &file.body))?;
    }
    Ok(dict)
}

/// The workload tree's files: (path, bytes, request weight), without their content.
#[pyfunction]
fn tree_index() -> Vec<(String, usize, f64)> {
    crate::tree::tree_index().into_iter().map(|f| (f.path, f.bytes, f.weight)).collect()
}

/// The workload tree's files with their content: path -> bytes (51 MB).
#[pyfunction]
fn tree_files(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    for file in crate::tree::tree_index() {
        dict.set_item(&file.path, PyBytes::new(py, &crate::tree::tree_body(&file)))?;
    }
    Ok(dict)
}

#[pymodule(name = "_engine")]
fn engine_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    m.add("RESULT_SCHEMA", crate::result::RESULT_SCHEMA)?;
    m.add_class::<Run>()?;
    m.add_class::<Server>()?;
    m.add_function(wrap_pyfunction!(workload_files, m)?)?;
    m.add_function(wrap_pyfunction!(tree_index, m)?)?;
    m.add_function(wrap_pyfunction!(tree_files, m)?)?;
    m.add_function(wrap_pyfunction!(self_signed_certificate, m)?)?;
    m.add_function(wrap_pyfunction!(serve_command, m)?)?;
    m.add_function(wrap_pyfunction!(merge_histograms, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_percentiles, m)?)?;
    m.add_function(wrap_pyfunction!(histogram_distribution, m)?)?;
    m.add_function(wrap_pyfunction!(split_plan, m)?)?;
    m.add_function(wrap_pyfunction!(merge_agents, m)?)?;
    Ok(())
}
