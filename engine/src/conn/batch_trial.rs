//! The batch window's trial (plan `io_batch_us` absent): whether a run's measured interval has the
//! window is decided by measuring, in the last part of its warm-up. The window wins where each
//! response's wake-up competes with the server for the same cores (nginx: 1.11-1.18x requests/s
//! at 0.71-0.76x the client's CPU per request) and loses where the server leaves them idle or
//! already serves many requests a wake-up (a delaying server, the built-in one: 0.91-0.98x):
//! bench/README.md. So the load threads all run spans with and without it in turn (ABBA order,
//! against drift) and the run keeps it only if it served as much at clearly less CPU per response.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stats::cpu::thread_cpu_us;

/// The window tried. Against nginx at 20, 50 and 100 connections 400 µs and 1 ms cost the client
/// 0.85-0.95x the CPU per request of 200 µs at as many requests/s (bench/README.md).
pub const TRIAL_WINDOW_US: u64 = 400;
/// Spans in a trial: pairs of one with and one without the window.
const SPANS: usize = 8;
/// The trial's share of the warm-up, at its end: what comes before it opens the connections and
/// warms the server.
const WARMUP_SHARE: f64 = 0.75;
/// The longest trial: spans of 250 ms.
const MAX_TRIAL_US: u64 = 2_000_000;
/// The shortest span worth a count; a shorter warm-up has no trial, and no window.
const MIN_SPAN_US: u64 = 25_000;
/// Kept only if the spans with the window served at least this share of the responses of those
/// without (median over pairs)...
const MIN_RESPONSES_RATIO: f64 = 0.98;
/// ...at no more than this share of their load threads' CPU per response.
const MAX_CPU_RATIO: f64 = 0.9;

const PENDING: u8 = 0;
const WITHOUT: u8 = 1;
const WITH: u8 = 2;

/// One span of the trial, all load threads together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TrialSpan {
    /// Whether the span ran with the window.
    pub window: bool,
    /// Responses (answers and failures) that ended in the span.
    pub responses: u64,
    /// The load threads' CPU time (user + system) in the span.
    pub cpu_us: u64,
}

/// What the warm-up's trial measured and kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct BatchTrial {
    /// The window tried (µs).
    pub window_us: u64,
    /// The spans in order, each as long as the others.
    pub spans: Vec<TrialSpan>,
    /// The median over pairs of spans of the responses with the window over those without; None
    /// when a span had no responses (or no CPU) to compare.
    pub responses_ratio: Option<f64>,
    /// The median over pairs of the CPU per response with the window over without; None as above.
    pub cpu_ratio: Option<f64>,
    /// Whether the measured interval ran with the window. False too when a load thread ended
    /// before the trial did (the spans are then incomplete).
    pub kept: bool,
}

impl BatchTrial {
    /// Per pair of spans, the responses with the window over those without, and the CPU per
    /// response with over without: their medians; None when a span judges nothing.
    pub fn ratios(spans: &[TrialSpan]) -> Option<(f64, f64)> {
        let (mut responses, mut cpu): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
        for pair in spans.chunks_exact(2) {
            let (with, without) = if pair[0].window { (&pair[0], &pair[1]) } else { (&pair[1], &pair[0]) };
            if with.responses == 0 || without.responses == 0 || without.cpu_us == 0 {
                return None;
            }
            responses.push(with.responses as f64 / without.responses as f64);
            let per_response = |s: &TrialSpan| s.cpu_us as f64 / s.responses as f64;
            cpu.push(per_response(with) / per_response(without));
        }
        (!responses.is_empty()).then(|| (median(&mut responses), median(&mut cpu)))
    }

    /// The rule: keep the window when the medians are at least `MIN_RESPONSES_RATIO` and at most
    /// `MAX_CPU_RATIO`.
    pub fn window_wins(spans: &[TrialSpan]) -> bool {
        BatchTrial::ratios(spans)
            .is_some_and(|(responses, cpu)| responses >= MIN_RESPONSES_RATIO && cpu <= MAX_CPU_RATIO)
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 0 {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

/// Whether span `k` has the window: pairs alternate their order (without, with; with, without).
fn span_has_window(k: usize) -> bool {
    (k % 2 == 1) != ((k / 2) % 2 == 1)
}

/// The trial a run's threads share: where its spans lie in the warm-up, what each thread counted
/// in each, and the verdict, which the last thread to count its last span draws.
pub struct Trial {
    /// From the run's start to the first span.
    offset_us: u64,
    span_us: u64,
    threads: usize,
    responses: [AtomicU64; SPANS],
    cpu_us: [AtomicU64; SPANS],
    done: AtomicUsize,
    verdict: AtomicU8,
}

impl Trial {
    /// The trial of a run whose warm-up is `warmup_us`, over `threads` load threads; None when
    /// the warm-up is too short for spans worth counting.
    pub fn for_warmup(warmup_us: u64, threads: usize) -> Option<Trial> {
        let trial_us = ((warmup_us as f64 * WARMUP_SHARE) as u64).min(MAX_TRIAL_US);
        let span_us = trial_us / SPANS as u64;
        (span_us >= MIN_SPAN_US).then(|| Trial {
            offset_us: warmup_us - span_us * SPANS as u64,
            span_us,
            threads,
            responses: Default::default(),
            cpu_us: Default::default(),
            done: AtomicUsize::new(0),
            verdict: AtomicU8::new(PENDING),
        })
    }

    /// The spans as counted so far, and the verdict.
    pub fn record(&self) -> BatchTrial {
        let spans: Vec<TrialSpan> = (0..SPANS)
            .map(|k| TrialSpan {
                window: span_has_window(k),
                responses: self.responses[k].load(Ordering::Acquire),
                cpu_us: self.cpu_us[k].load(Ordering::Acquire),
            })
            .collect();
        let ratios = BatchTrial::ratios(&spans);
        BatchTrial {
            window_us: TRIAL_WINDOW_US,
            spans,
            responses_ratio: ratios.map(|(responses, _)| responses),
            cpu_ratio: ratios.map(|(_, cpu)| cpu),
            kept: self.verdict.load(Ordering::Acquire) == WITH,
        }
    }

    /// A thread counted its last span: the last one to do so draws the verdict from all spans.
    fn thread_done(&self) {
        if self.done.fetch_add(1, Ordering::AcqRel) + 1 == self.threads {
            let verdict = if BatchTrial::window_wins(&self.record().spans) { WITH } else { WITHOUT };
            self.verdict.store(verdict, Ordering::Release);
        }
    }
}

/// One load thread's part in the trial: it counts its responses and CPU in each span and adds
/// them to the shared counts as the span ends.
pub struct TrialCounter {
    trial: Arc<Trial>,
    /// When the first span begins (the clock of `now_us`); 0 until the run started.
    first_us: u64,
    /// The span being counted; `SPANS` once all are counted.
    span: usize,
    responses: u64,
    /// The thread's CPU when the span being counted began; None before the first span.
    cpu_start_us: Option<u64>,
    /// The verdict as this thread read it, once drawn.
    verdict: u8,
}

impl TrialCounter {
    pub fn new(trial: Arc<Trial>) -> TrialCounter {
        TrialCounter { trial, first_us: 0, span: 0, responses: 0, cpu_start_us: None, verdict: PENDING }
    }

    /// The run started at `start_us`.
    pub fn start(&mut self, start_us: u64) {
        self.first_us = start_us + self.trial.offset_us;
    }

    /// A response ended.
    pub fn ended(&mut self) {
        self.responses += 1;
    }

    /// Whether a wait at `now_us` has the window: inside the trial, its span's say; after it, the
    /// verdict's, and none while the other threads have not counted their last span.
    pub fn window_at(&mut self, now_us: u64) -> bool {
        if self.span < SPANS {
            self.count_until(now_us);
        }
        match (self.span, self.verdict) {
            (SPANS, PENDING) => {
                self.verdict = self.trial.verdict.load(Ordering::Acquire);
                self.verdict == WITH
            }
            (SPANS, verdict) => verdict == WITH,
            (span, _) => now_us >= self.first_us && span_has_window(span),
        }
    }

    /// When the trial's next boundary comes (its first span's start, or the end of the span
    /// being counted), so that a wait does not run past it; None after the trial.
    pub fn next_boundary_us(&self) -> Option<u64> {
        match self.cpu_start_us {
            None => Some(self.first_us),
            Some(_) => (self.span < SPANS).then(|| self.first_us + (self.span as u64 + 1) * self.trial.span_us),
        }
    }

    /// Begin counting at the first span's start; add the spans that ended by `now_us` to the
    /// shared counts.
    fn count_until(&mut self, now_us: u64) {
        if now_us < self.first_us {
            return;
        }
        if self.cpu_start_us.is_none() {
            (self.responses, self.cpu_start_us) = (0, Some(thread_cpu_us()));
        }
        while self.next_boundary_us().is_some_and(|end_us| now_us >= end_us) {
            let cpu_us = thread_cpu_us();
            let span_cpu_us = cpu_us - self.cpu_start_us.unwrap_or(cpu_us);
            self.trial.responses[self.span].fetch_add(std::mem::take(&mut self.responses), Ordering::AcqRel);
            self.trial.cpu_us[self.span].fetch_add(span_cpu_us, Ordering::AcqRel);
            self.cpu_start_us = Some(cpu_us);
            self.span += 1;
            if self.span == SPANS {
                self.trial.thread_done();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(window: bool, responses: u64, cpu_us: u64) -> TrialSpan {
        TrialSpan { window, responses, cpu_us }
    }

    /// Four pairs in the trial's order, each span with the window serving `responses_ratio` as
    /// many responses at `cpu_ratio` the CPU per response of its partner.
    fn spans(responses_ratio: f64, cpu_ratio: f64) -> Vec<TrialSpan> {
        let with = |w: bool| if w { (10_000.0 * responses_ratio) as u64 } else { 10_000 };
        (0..SPANS)
            .map(|k| {
                let w = span_has_window(k);
                let per_response_us = if w { 10.0 * cpu_ratio } else { 10.0 };
                span(w, with(w), (with(w) as f64 * per_response_us) as u64)
            })
            .collect()
    }

    #[test]
    fn pairs_alternate_their_order() {
        let order: Vec<bool> = (0..SPANS).map(span_has_window).collect();
        assert_eq!(order, [false, true, true, false, false, true, true, false]);
    }

    #[test]
    fn the_window_is_kept_where_it_served_as_much_at_less_cpu() {
        let (responses, cpu) = BatchTrial::ratios(&spans(1.15, 0.73)).unwrap();
        assert!((responses - 1.15).abs() < 1e-3 && (cpu - 0.73).abs() < 1e-3, "{responses} {cpu}");
        assert!(BatchTrial::window_wins(&spans(1.15, 0.73)), "nginx's figures");
        assert!(BatchTrial::window_wins(&spans(1.0, 0.8)), "a constant rate: same responses, less CPU");
        assert!(!BatchTrial::window_wins(&spans(0.95, 1.05)), "the built-in server's figures");
        assert!(!BatchTrial::window_wins(&spans(0.92, 1.4)), "a delaying server's figures");
        assert!(!BatchTrial::window_wins(&spans(1.0, 0.95)), "a saving within the noise");
        assert!(!BatchTrial::window_wins(&spans(0.97, 0.5)), "less CPU but fewer responses");
        let mut one_empty = spans(1.15, 0.73);
        one_empty[3].responses = 0;
        assert!(!BatchTrial::window_wins(&one_empty), "a span without responses judges nothing");
        assert!(!BatchTrial::window_wins(&[]));
    }

    #[test]
    fn the_median_pair_decides() {
        let mut spans = spans(1.15, 0.73);
        // One pair where the window lost badly does not outvote three.
        spans[1].responses = 5_000;
        assert!(BatchTrial::window_wins(&spans));
        spans[2].responses = 5_000;
        assert!(!BatchTrial::window_wins(&spans), "two of four: the median is their mean");
    }

    #[test]
    fn the_trial_takes_the_end_of_the_warm_up() {
        assert!(Trial::for_warmup(200_000, 2).is_none(), "spans of 18.75 ms: no trial");
        let trial = Trial::for_warmup(1_000_000, 2).unwrap();
        assert_eq!((trial.span_us, trial.offset_us), (93_750, 250_000));
        let trial = Trial::for_warmup(60_000_000, 2).unwrap();
        assert_eq!((trial.span_us, trial.offset_us), (250_000, 58_000_000), "at most 2 s");
    }

    #[test]
    fn threads_count_their_spans_and_the_last_draws_the_verdict() {
        let trial = Arc::new(Trial::for_warmup(1_000_000, 2).unwrap());
        let mut counters = [TrialCounter::new(trial.clone()), TrialCounter::new(trial.clone())];
        counters.iter_mut().for_each(|c| c.start(1_000));
        let first_us = 1_000 + 250_000;
        assert!(!counters[0].window_at(first_us - 1), "before the trial: no window");
        for k in 0..SPANS {
            let at_us = first_us + k as u64 * 93_750;
            for counter in &mut counters {
                assert_eq!(counter.window_at(at_us), span_has_window(k), "span {k}");
                (0..if span_has_window(k) { 20 } else { 10 }).for_each(|_| counter.ended());
            }
        }
        let end_us = first_us + SPANS as u64 * 93_750;
        assert!(!counters[0].window_at(end_us), "one thread done: no verdict yet");
        assert_eq!(trial.verdict.load(Ordering::Acquire), PENDING);
        let kept = counters[1].window_at(end_us);
        let record = trial.record();
        let responses: Vec<u64> = record.spans.iter().map(|s| s.responses).collect();
        assert_eq!(responses, [20, 40, 40, 20, 20, 40, 40, 20]);
        assert_eq!(record.kept, kept);
        assert_eq!(counters[0].window_at(end_us + 1), kept, "the first thread reads the verdict");
        assert_eq!(counters[0].next_boundary_us(), None);
    }
}
