//! The sessions' requests, encoded once with the plan's: per session type, per page, the main
//! request and each embedded resource plain and revalidating (If-Modified-Since).

use super::random::WeightedChoice;
use super::session::SessionsPlan;
use crate::plan::{Plan, PlanError, Target};
use crate::request::{EncodedRequest, IF_MODIFIED_SINCE};

/// Indices into the run's encoded requests for one page.
pub struct PageRequests {
    pub main: usize,
    /// (plain, revalidating with If-Modified-Since) for each embedded resource.
    pub embedded: Vec<(usize, usize)>,
}

/// The sessions plan with its requests encoded, shared by every thread.
pub struct SessionsShared {
    pub plan: SessionsPlan,
    /// Per session type, per page.
    pub pages: Vec<Vec<PageRequests>>,
    pub session_types: WeightedChoice,
    /// Where each type's pages start in the flat list of page types.
    pub page_offsets: Vec<usize>,
}

/// Encode every request the sessions can make, appended to `requests`.
pub fn encode_pages(
    plan: &Plan,
    target: &Target,
    sessions: SessionsPlan,
    requests: &mut Vec<EncodedRequest>,
) -> Result<SessionsShared, PlanError> {
    let mut push = |path: &str, header| -> Result<usize, PlanError> {
        requests.push(EncodedRequest::for_path(plan, target, path, header)?);
        Ok(requests.len() - 1)
    };
    let mut pages = Vec::new();
    for session in &sessions.types {
        let mut encoded = Vec::new();
        for page in &session.pages {
            let main = push(&page.path, None)?;
            let embedded = page
                .embedded
                .iter()
                .map(|path| Ok((push(path, None)?, push(path, Some(IF_MODIFIED_SINCE))?)))
                .collect::<Result<_, PlanError>>()?;
            encoded.push(PageRequests { main, embedded });
        }
        pages.push(encoded);
    }
    let session_types = WeightedChoice::new(sessions.types.iter().map(|t| t.weight));
    let page_offsets = sessions
        .types
        .iter()
        .scan(0, |offset, t| {
            let first = *offset;
            *offset += t.pages.len();
            Some(first)
        })
        .collect();
    Ok(SessionsShared { plan: sessions, pages, session_types, page_offsets })
}
