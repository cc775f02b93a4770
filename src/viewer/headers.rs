//! What every response of the viewer and the annotation page carries, and the host names
//! they answer: a leaf of `viewer/` shared by both routers.
//!
//! Every response forbids scripts and outside resources (`Content-Security-Policy`),
//! content sniffing, and (the viewer) any referrer. The annotation page sends its referrer
//! to itself only (`same-origin`): under `no-referrer` a browser sends `Origin: null` with
//! a form's POST, and the page's cross-site check could not tell its own form from a
//! forged one.

use std::net::IpAddr;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};

const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                   form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Whom a page's requests name as their referrer.
#[derive(Clone, Copy, Debug)]
pub(super) enum Referrer {
    /// Nobody (the read-only viewer).
    None,
    /// The page's own origin only (the annotation page, whose POSTs must carry it).
    SameOrigin,
}

/// Marks a response as a script-free page of its own origin.
pub(super) fn mark(headers: &mut HeaderMap, referrer: Referrer) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    let policy = match referrer {
        Referrer::None => "no-referrer",
        Referrer::SameOrigin => "same-origin",
    };
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static(policy));
}

/// Whether the request's `Host` (if any) names this machine's loopback.
pub(super) fn loopback_host(request: &Request) -> bool {
    let Some(host) = request.headers().get(header::HOST) else {
        return true;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    is_loopback_name(host)
}

/// `localhost`, a loopback IPv4 address or `[::1]`, with or without a port.
fn is_loopback_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names() {
        for host in [
            "localhost",
            "LOCALHOST:8700",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]:8700",
            "[::1]",
        ] {
            assert!(is_loopback_name(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8700",
            "10.0.0.1:8700",
            "localhost.evil.example",
            "[::2]:1",
            "",
        ] {
            assert!(!is_loopback_name(host), "{host}");
        }
    }
}
