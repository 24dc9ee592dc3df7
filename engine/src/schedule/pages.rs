//! The sessions' requests, encoded once with the plan's: per session type, per page, the main
//! request (its method, form body and content marker) and each embedded resource plain and
//! revalidating (If-Modified-Since), for the page's target (the plan's URL or the https one).

use super::walk::Walk;
use crate::plan::sessions::{Scheme, SessionsPlan};
use crate::plan::{Plan, PlanError, Target};
use crate::random::WeightedChoice;
use crate::request::{EncodedRequest, RequestLine, IF_MODIFIED_SINCE};

const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");

/// Indices into the run's encoded requests for one page.
pub struct PageRequests {
    pub main: usize,
    /// (plain, revalidating with If-Modified-Since) for each embedded resource.
    pub embedded: Vec<(usize, usize)>,
    /// The page goes to the https target, over the user's second pair of connections.
    pub https: bool,
}

/// The sessions plan with its requests encoded, shared by every thread.
pub struct SessionsShared {
    pub plan: SessionsPlan,
    /// Per session type, per page.
    pub pages: Vec<Vec<PageRequests>>,
    /// Per session type, its way from page to page.
    pub walks: Vec<Walk>,
    pub session_types: WeightedChoice,
    /// Where each type's pages start in the flat list of page types.
    pub page_offsets: Vec<usize>,
    /// Connections each user holds: two per target.
    pub connections_per_user: usize,
}

/// Encode every request the sessions can make, appended to `requests`; `https` is the target
/// of the pages with `scheme: https` (the plan's checks made sure it is there if one has).
pub fn encode_pages(
    plan: &Plan,
    target: &Target,
    https: Option<&Target>,
    sessions: SessionsPlan,
    requests: &mut Vec<EncodedRequest>,
) -> Result<SessionsShared, PlanError> {
    let mut pages = Vec::new();
    for session in &sessions.types {
        let mut encoded = Vec::new();
        for page in &session.pages {
            let (on, index) = match (page.scheme, https) {
                (Scheme::Https, Some(https)) => (https, 1),
                (Scheme::Https, None) => {
                    return Err(PlanError("a page has scheme https but no https_url: give one".into()))
                }
                (Scheme::Http, _) => (target, 0),
            };
            let mut push = |request: EncodedRequest, expect: Option<&str>| -> Result<usize, PlanError> {
                requests.push(EncodedRequest { target: index, ..request.expecting(expect)? });
                Ok(requests.len() - 1)
            };
            let body = page.body.as_deref().unwrap_or_default().as_bytes();
            let line = RequestLine { method: &page.method, path: &page.path };
            let form = page.body.is_some().then_some(FORM);
            let main = push(EncodedRequest::with_body(plan, on, line, form, body), page.expect.as_deref())?;
            let embedded = page
                .embedded
                .iter()
                .map(|path| {
                    let plain = push(EncodedRequest::for_path(plan, on, path, None)?, None)?;
                    Ok((plain, push(EncodedRequest::for_path(plan, on, path, Some(IF_MODIFIED_SINCE))?, None)?))
                })
                .collect::<Result<_, PlanError>>()?;
            encoded.push(PageRequests { main, embedded, https: index == 1 });
        }
        pages.push(encoded);
    }
    let session_types = WeightedChoice::new(sessions.types.iter().map(|t| t.weight));
    let walks = sessions.types.iter().map(Walk::of).collect();
    let page_offsets = sessions
        .types
        .iter()
        .scan(0, |offset, t| {
            let first = *offset;
            *offset += t.pages.len();
            Some(first)
        })
        .collect();
    let connections_per_user = sessions.connections_per_user();
    Ok(SessionsShared { plan: sessions, pages, walks, session_types, page_offsets, connections_per_user })
}
