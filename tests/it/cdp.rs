//! Drives headless Chromium through the Chrome DevTools Protocol, for the pages a test must
//! use as a person does (type a name, click a radio button, submit a form) rather than
//! only load.
//!
//! The protocol runs over `--remote-debugging-pipe`: Chromium reads commands from its fd 3
//! and writes answers and events to its fd 4, each message one JSON object ended by a NUL
//! byte. One page target, attached in flat mode (its session id on every command). Every
//! wait has a deadline, so a page that never loads fails the test instead of hanging it.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::browser::chromium;

/// How long one command or one page load may take.
const DEADLINE: Duration = Duration::from_secs(60);

/// A headless Chromium with one page, killed when dropped.
pub(crate) struct Browser {
    child: Child,
    commands: std::io::PipeWriter,
    messages: Receiver<Value>,
    /// Events read while waiting for an answer, in order.
    events: Vec<Value>,
    next_id: u64,
    session: String,
}

impl Browser {
    /// Starts Chromium with its own `profile` directory and opens a blank page.
    pub(crate) fn launch(profile: &Path) -> Self {
        let (their_commands, commands) = std::io::pipe().unwrap();
        let (answers, their_answers) = std::io::pipe().unwrap();
        let (read_fd, write_fd) = (their_commands.as_raw_fd(), their_answers.as_raw_fd());
        let mut cmd = Command::new(chromium());
        cmd.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-pipe",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: between fork and exec only async-signal-safe calls (fcntl, dup2) run.
        unsafe {
            cmd.pre_exec(move || {
                // Out of the way first, so that moving one onto 3 or 4 cannot close the other.
                let a = libc::fcntl(read_fd, libc::F_DUPFD_CLOEXEC, 10);
                let b = libc::fcntl(write_fd, libc::F_DUPFD_CLOEXEC, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        drop((their_commands, their_answers));
        let (send, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(answers);
            loop {
                let mut message = Vec::new();
                match reader.read_until(0, &mut message) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                message.pop_if(|b| *b == 0);
                let Ok(value) = serde_json::from_slice(&message) else {
                    continue;
                };
                if send.send(value).is_err() {
                    return;
                }
            }
        });
        let mut browser = Self {
            child,
            commands,
            messages,
            events: Vec::new(),
            next_id: 0,
            session: String::new(),
        };
        let target = browser.send(None, "Target.createTarget", json!({"url": "about:blank"}));
        let attached = browser.send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.call("Page.enable", json!({}));
        browser.call("Runtime.enable", json!({}));
        browser
    }

    /// Sends a command (to the page's session, or the browser's) and returns its result.
    fn send(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.commands.write_all(&bytes).unwrap();
        let started = Instant::now();
        loop {
            let m = self.next_message(started, method);
            if m["id"] == json!(id) {
                assert!(m.get("error").is_none(), "{method} failed: {m}");
                return m["result"].clone();
            }
            if m.get("method").is_some() {
                self.events.push(m);
            }
        }
    }

    fn next_message(&mut self, started: Instant, waiting_for: &str) -> Value {
        let left = DEADLINE.saturating_sub(started.elapsed());
        match self.messages.recv_timeout(left) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("Chromium did not answer {waiting_for} in {DEADLINE:?}"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("Chromium exited while the test waited for {waiting_for}")
            }
        }
    }

    /// A command to the browser itself (not its page).
    pub(crate) fn browser_call(&mut self, method: &str, params: Value) -> Value {
        self.send(None, method, params)
    }

    /// A command to the page.
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(Some(&session), method, params)
    }

    /// Waits for the page's next `event` (one already read counts), and returns it.
    fn wait_for(&mut self, event: &str) -> Value {
        if let Some(i) = self.events.iter().position(|e| e["method"] == event) {
            return self.events.remove(i);
        }
        let started = Instant::now();
        loop {
            let m = self.next_message(started, event);
            if m["method"] == event {
                return m;
            }
        }
    }

    /// Loads `url` and waits until it has loaded.
    pub(crate) fn open(&mut self, url: &str) {
        self.events.retain(|e| e["method"] != "Page.loadEventFired");
        let navigated = self.call("Page.navigate", json!({"url": url}));
        assert!(navigated.get("errorText").is_none(), "{url}: {navigated}");
        self.wait_for("Page.loadEventFired");
    }

    /// The value of the JavaScript expression `js` in the page.
    pub(crate) fn eval(&mut self, js: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{js}: {r}");
        r["result"]["value"].clone()
    }

    /// Types `text` into the element `selector`, as keyboard input.
    pub(crate) fn type_into(&mut self, selector: &str, text: &str) {
        let found = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return false; e.focus(); e.select && e.select(); return true; }})()",
            json!(selector)
        ));
        assert_eq!(found, json!(true), "no element {selector}");
        self.call("Input.insertText", json!({"text": text}));
    }

    /// Clicks the element `selector` as a mouse does (at its centre), and, when `loads`,
    /// waits for the page the click leads to.
    pub(crate) fn click(&mut self, selector: &str, loads: bool) {
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
            json!(selector)
        ));
        assert!(at.is_array(), "no element {selector}");
        self.events.retain(|e| e["method"] != "Page.loadEventFired");
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": at[0], "y": at[1], "button": "left", "clickCount": 1}),
            );
        }
        if loads {
            self.wait_for("Page.loadEventFired");
        }
    }

    /// The page's visible text.
    pub(crate) fn text(&mut self) -> String {
        self.eval("document.body.innerText")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
