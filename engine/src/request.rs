//! Requests are encoded into bytes once, when the plan is built; sending is a plain write.

use std::sync::Arc;

use crate::http1::check::Marker;
use crate::http2::H2Request;
use crate::plan::{HttpVersion, Plan, PlanError, Target};
use crate::random::WeightedChoice;
use crate::uri::encode_target;

/// The bytes of the plan's request, in the two forms a connection may need.
#[derive(Debug, Clone)]
pub struct EncodedRequest {
    /// For a connection that goes on after this request.
    pub reuse: Box<[u8]>,
    /// For the last request on a connection: asks the server to close it.
    pub last: Box<[u8]>,
    /// A HEAD request's response has no body.
    pub is_head: bool,
    /// What the response's body must hold (None: any body will do).
    pub expect: Option<Arc<Marker>>,
    /// Under HTTP/2 the request's fields and body (`reuse` and `last` are then empty).
    pub h2: Option<H2Request>,
    /// Which target it goes to: 0 the plan's URL, 1 the sessions' https_url.
    pub target: usize,
    /// Its method is idempotent (RFC 9110 §9.2.2): it may be sent again after a connection that
    /// closed before any byte of its answer.
    pub idempotent: bool,
}

/// The methods RFC 9110 §9.2.2 defines as idempotent.
const IDEMPOTENT_METHODS: [&str; 6] = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"];

/// Sent with revalidations of embedded resources, as a browser with a cached copy would.
pub const IF_MODIFIED_SINCE: (&str, &str) = ("If-Modified-Since", "Tue, 01 Nov 2011 00:00:00 GMT");

impl EncodedRequest {
    /// The plan's request to the URL's path.
    pub fn new(plan: &Plan, target: &Target) -> Result<EncodedRequest, PlanError> {
        EncodedRequest::for_path(plan, target, &target.path, None)?.expecting(plan.expect.as_deref())
    }

    /// The response must hold `marker` (None or empty: nothing to check); a HEAD has no body to hold it.
    pub fn expecting(mut self, marker: Option<&str>) -> Result<EncodedRequest, PlanError> {
        self.expect = Marker::new(marker);
        if self.expect.is_some() && self.is_head {
            return Err(PlanError(
                "a HEAD request's response has no body to hold the expected marker: drop `expect` or use GET".into(),
            ));
        }
        Ok(self)
    }

    /// The plan's method, headers and body, to another path on the same target.
    pub fn for_path(
        plan: &Plan,
        target: &Target,
        path: &str,
        extra_header: Option<(&str, &str)>,
    ) -> Result<EncodedRequest, PlanError> {
        let line = RequestLine { method: &plan.method, path };
        Ok(EncodedRequest::with_body(plan, target, line, extra_header, &plan.body()?))
    }

    /// The plan's headers with this method, path and body (a session's page).
    pub fn with_body(
        plan: &Plan,
        target: &Target,
        line: RequestLine,
        extra_header: Option<(&str, &str)>,
        body: &[u8],
    ) -> EncodedRequest {
        let RequestLine { method, path } = line;
        let path = &*encode_target(path);
        let is_head = method.eq_ignore_ascii_case("HEAD");
        let idempotent = IDEMPOTENT_METHODS.iter().any(|m| method.eq_ignore_ascii_case(m));
        if plan.http_version == HttpVersion::Http2 {
            let scheme = if target.tls { "https" } else { "http" };
            let mut headers = plan.headers.clone();
            headers.extend(extra_header.map(|(name, value)| (name.to_string(), value.to_string())));
            let h2 = H2Request::new(method, scheme, &target.host_header(), path, &headers, body);
            return EncodedRequest {
                reuse: Box::new([]),
                last: Box::new([]),
                is_head,
                expect: None,
                h2: Some(h2),
                target: 0,
                idempotent,
            };
        }
        let http10 = plan.http_version == HttpVersion::Http10;
        let encode = |connection: Option<&str>| -> Box<[u8]> {
            let version = if http10 { "HTTP/1.0" } else { "HTTP/1.1" };
            let mut head = format!("{method} {path} {version}\r\n");
            if !plan.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
                head.push_str(&format!("Host: {}\r\n", target.host_header()));
            }
            for (name, value) in &plan.headers {
                if !name.eq_ignore_ascii_case("connection") {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
            }
            if let Some((name, value)) = extra_header {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            if let Some(connection) = connection {
                head.push_str(&format!("Connection: {connection}\r\n"));
            }
            if !body.is_empty() || method == "POST" || method == "PUT" {
                head.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            head.push_str("\r\n");
            let mut bytes = head.into_bytes();
            bytes.extend_from_slice(body);
            bytes.into_boxed_slice()
        };
        let reuse = if http10 { encode(Some("keep-alive")) } else { encode(None) };
        let last = encode(Some("close"));
        EncodedRequest { reuse, last, is_head, expect: None, h2: None, target: 0, idempotent }
    }
}

/// A request's method and path.
#[derive(Debug, Clone, Copy)]
pub struct RequestLine<'a> {
    pub method: &'a str,
    pub path: &'a str,
}

/// The plan's requests: its URL's, or one per path of its mix, with the mix's cumulative weights.
pub fn plan_requests(plan: &Plan, target: &Target) -> Result<(Vec<EncodedRequest>, Option<WeightedChoice>), PlanError> {
    match &plan.paths {
        None => Ok((vec![EncodedRequest::new(plan, target)?], None)),
        Some(paths) => {
            let requests = paths
                .iter()
                .map(|p| EncodedRequest::for_path(plan, target, &p.path, None)?.expecting(p.expect.as_deref()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((requests, Some(WeightedChoice::new(paths.iter().map(|p| p.weight)))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(extra: &str) -> EncodedRequest {
        let plan = Plan::from_json(&format!(
            r#"{{"url": "http://127.0.0.1:8080/p?q=1", "connections": 1, "requests": 1 {extra}}}"#
        ))
        .unwrap();
        let target = plan.resolve().unwrap();
        EncodedRequest::new(&plan, &target).unwrap()
    }

    #[test]
    fn get_with_defaults() {
        let r = encoded("");
        assert_eq!(&*r.reuse, b"GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
        assert_eq!(&*r.last, b"GET /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n");
        assert!(!r.is_head);
    }

    #[test]
    fn http10_asks_for_keep_alive() {
        let r = encoded(r#", "http_version": "1.0""#);
        assert_eq!(&*r.reuse, b"GET /p?q=1 HTTP/1.0\r\nHost: 127.0.0.1:8080\r\nConnection: keep-alive\r\n\r\n");
    }

    #[test]
    fn headers_body_and_host_override() {
        let r = encoded(r#", "method": "POST", "headers": [["Host", "example"], ["X-A", "1"]], "body_base64": "aGk=""#);
        assert_eq!(&*r.reuse, b"POST /p?q=1 HTTP/1.1\r\nHost: example\r\nX-A: 1\r\nContent-Length: 2\r\n\r\nhi");
    }

    #[test]
    fn http2_requests_carry_fields_instead_of_bytes() {
        let r = encoded(r#", "http_version": "2", "headers": [["X-A", "1"], ["Connection", "close"]]"#);
        let h2 = r.h2.unwrap();
        let fields: Vec<(&[u8], &[u8])> = h2.fields.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        let expected: [(&[u8], &[u8]); 5] = [
            (b":method", b"GET"),
            (b":scheme", b"http"),
            (b":authority", b"127.0.0.1:8080"),
            (b":path", b"/p?q=1"),
            (b"x-a", b"1"),
        ];
        assert_eq!(fields, expected);
        assert!(r.reuse.is_empty());
    }

    #[test]
    fn head_is_flagged() {
        assert!(encoded(r#", "method": "HEAD""#).is_head);
    }

    #[test]
    fn a_plan_with_paths_encodes_one_request_per_path() {
        let plan = Plan::from_json(
            r#"{"url": "http://127.0.0.1:8080/ignored", "connections": 1, "requests": 1,
                "paths": [{"path": "/a", "weight": 1}, {"path": "/b?x=1", "weight": 2}]}"#,
        )
        .unwrap();
        let (requests, mix) = plan_requests(&plan, &plan.resolve().unwrap()).unwrap();
        assert!(requests[1].reuse.starts_with(b"GET /b?x=1 HTTP/1.1\r\n"));
        assert_eq!(requests.len(), 2);
        assert_eq!(mix.unwrap().pick(0.5), 1);
    }
}
