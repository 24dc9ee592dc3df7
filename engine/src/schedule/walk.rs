//! A session's way from page to page: in the order of its pages, or a Markov chain over them
//! (SPECweb2005's transition tables), each row a weighted choice among the next pages and the end.

use crate::plan::sessions::{SessionType, END};
use crate::random::{Rng, WeightedChoice};

/// One page's row: where a user goes next (None: the session ends).
#[derive(Debug, Clone)]
pub struct Row {
    choice: WeightedChoice,
    next: Box<[Option<usize>]>,
}

#[derive(Debug, Clone)]
pub enum Walk {
    /// Page after page, ending after the last.
    InOrder { pages: usize },
    /// From `start`, drawn row by row; a page without a row ends the session.
    Chain { start: usize, rows: Vec<Option<Row>> },
}

impl Walk {
    /// The walk of a validated session type (its names exist).
    pub fn of(session: &SessionType) -> Walk {
        let Some(transitions) = &session.transitions else {
            return Walk::InOrder { pages: session.pages.len() };
        };
        let index = |name: &str| session.page_index(name).expect("a validated page name");
        let rows = session
            .pages
            .iter()
            .map(|page| {
                transitions.get(&page.name).map(|row| Row {
                    choice: WeightedChoice::new(row.values().copied()),
                    next: row.keys().map(|to| (to != END).then(|| index(to))).collect(),
                })
            })
            .collect();
        Walk::Chain { start: session.start.as_deref().map_or(0, index), rows }
    }

    pub fn first(&self) -> usize {
        match self {
            Walk::InOrder { .. } => 0,
            Walk::Chain { start, .. } => *start,
        }
    }

    /// The page after `page` (drawn from `rng` in a chain, which only then draws); None: the
    /// session ends.
    pub fn next(&self, page: usize, rng: &mut Rng) -> Option<usize> {
        match self {
            Walk::InOrder { pages } => Some(page + 1).filter(|next| next < pages),
            Walk::Chain { rows, .. } => rows[page].as_ref().and_then(|row| row.next[row.choice.pick(rng.unit())]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::sessions::{Page, Think};

    fn session(transitions: &str, start: Option<&str>) -> SessionType {
        let page =
            |name: &str| -> Page { serde_json::from_str(&format!(r#"{{"name": "{name}", "path": "/"}}"#)).unwrap() };
        SessionType {
            name: "bank".into(),
            weight: 1.0,
            think: Think::Fixed { mean_us: 0 },
            pages: ["login", "summary", "transfer", "logout"].map(page).to_vec(),
            start: start.map(Into::into),
            transitions: Some(serde_json::from_str(transitions).unwrap()),
        }
    }

    #[test]
    fn draws_follow_the_table_within_tolerance() {
        let walk = Walk::of(&session(
            r#"{"login": {"summary": 0.7, "transfer": 0.2, "end": 0.1},
                "summary": {"transfer": 0.5, "logout": 0.5}, "transfer": {"logout": 1}}"#,
            Some("login"),
        ));
        let mut rng = Rng::new(42);
        let n = 200_000;
        let mut counts = [0u32; 4];
        let mut ends = 0u32;
        for _ in 0..n {
            match walk.next(0, &mut rng) {
                Some(page) => counts[page] += 1,
                None => ends += 1,
            }
        }
        for (count, p) in [counts[1], counts[2], ends, counts[0] + counts[3]].iter().zip([0.7, 0.2, 0.1, 0.0]) {
            let expected = p * n as f64;
            let sigma = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((*count as f64 - expected).abs() <= 5.0 * sigma, "{count} against {expected}: {counts:?} {ends}");
        }
        // A row that is certain, and a page without a row, which ends the session.
        assert_eq!(walk.next(2, &mut rng), Some(3));
        assert_eq!(walk.next(3, &mut rng), None);
        assert_eq!(walk.first(), 0);
    }

    #[test]
    fn whole_walks_visit_pages_as_the_chain_says() {
        // From summary: itself with 0.5, else logout; logout ends. Visits to summary per session
        // are geometric with mean 2.
        let walk = Walk::of(&session(
            r#"{"summary": {"summary": 0.5, "logout": 0.5}, "logout": {"end": 1}}"#,
            Some("summary"),
        ));
        let mut rng = Rng::new(3);
        let sessions = 50_000;
        let mut summaries = 0u64;
        for _ in 0..sessions {
            let mut page = Some(walk.first());
            while let Some(at) = page {
                summaries += u64::from(at == 1);
                page = walk.next(at, &mut rng);
            }
        }
        let mean = summaries as f64 / sessions as f64;
        assert!((mean - 2.0).abs() < 0.03, "{mean}");
    }

    #[test]
    fn without_a_table_the_pages_run_in_order() {
        let mut plain = session("{}", None);
        plain.transitions = None;
        let walk = Walk::of(&plain);
        let mut rng = Rng::new(1);
        let visited: Vec<usize> = std::iter::successors(Some(walk.first()), |&p| walk.next(p, &mut rng)).collect();
        assert_eq!(visited, [0, 1, 2, 3]);
    }
}
