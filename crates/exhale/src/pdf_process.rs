//! Statements' PDFs read in a process of their own: the server runs `exhale read-pdf` (this
//! binary again) for each, hands it the file on standard input and reads the rows, or the
//! refusal, as JSON on standard output. The child limits itself before it reads anything:
//! `MAX_MEMORY` of address space, `MAX_CPU_SECONDS` of processor time, no core file, and a
//! large stack. `statement`'s checks bound what a PDF may cost before the PDF reader runs; what
//! they miss (the reader is large third-party code never written for hostile files: a stack
//! overflow, a copy made a million times) kills that child, which the server answers as a PDF
//! too complex to read, and carries on.

use std::{
    io::{Read as _, Write as _},
    path::PathBuf,
    process::{Command, ExitCode, Stdio},
};

use statement::{PdfReader, Rows, StatementError};

/// The address space the child may use: the heaviest PDF within the checks' limits needs
/// about 90 MB.
const MAX_MEMORY: u64 = 512 * 1024 * 1024;

/// The processor time the child may use: the heaviest PDF within the checks' limits takes
/// about 5 s on a slow machine. Past it the kernel stops the child.
const MAX_CPU_SECONDS: u64 = 10;

/// The stack of the thread that reads the PDF: PDF readers recurse as files nest.
const STACK: usize = 64 * 1024 * 1024;

/// Reads each PDF by running `exhale read-pdf`.
pub(crate) struct ChildReader {
    program: PathBuf,
}

impl ChildReader {
    /// The running binary, as the kernel knows it (so an upgrade that replaces the file on disk
    /// still runs this version), else its path.
    pub(crate) fn this_program() -> anyhow::Result<Self> {
        let proc_self = PathBuf::from("/proc/self/exe");
        let program = if proc_self.exists() { proc_self } else { std::env::current_exe()? };
        Ok(Self { program })
    }
}

impl PdfReader for ChildReader {
    fn rows(&self, pdf: &[u8]) -> Result<Rows, StatementError> {
        let child = Command::new(&self.program)
            .arg("read-pdf")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(err) => {
                tracing::error!(error = %err, "cannot start the PDF reader");
                return Err(StatementError::PdfUnreadable);
            }
        };
        let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(StatementError::PdfUnreadable);
        };
        let mut answer = Vec::new();
        std::thread::scope(|scope| {
            // Written from a thread of its own while this one reads, so neither pipe fills
            // up and stops the other; a child that died early just closes its end.
            scope.spawn(move || {
                let _ = stdin.write_all(pdf);
            });
            let _ = stdout.read_to_end(&mut answer);
        });
        let status = child.wait();
        match serde_json::from_slice::<Result<Rows, StatementError>>(&answer) {
            Ok(read) if status.as_ref().is_ok_and(|s| s.success()) => read,
            _ => {
                // Killed by its limits (memory, time) or by the reader's own crash.
                tracing::warn!(status = ?status.ok(), "the PDF reader stopped without an answer");
                Err(StatementError::PdfTooComplex)
            }
        }
    }
}

/// `exhale read-pdf`: limits this process, reads a PDF from standard input and writes what
/// `statement::pdf_rows` makes of it to standard output.
pub(crate) fn read_one() -> ExitCode {
    let limited = [
        (rlimit::Resource::AS, MAX_MEMORY, MAX_MEMORY),
        (rlimit::Resource::CPU, MAX_CPU_SECONDS, MAX_CPU_SECONDS + 1),
        (rlimit::Resource::CORE, 0, 0),
    ]
    .into_iter()
    .all(|(resource, soft, hard)| rlimit::setrlimit(resource, soft, hard).is_ok());
    if !limited {
        // Never read a PDF without the limits.
        return ExitCode::FAILURE;
    }
    let mut pdf = Vec::new();
    let cap = statement::MAX_BYTES as u64 + 1;
    if std::io::stdin().take(cap).read_to_end(&mut pdf).is_err() {
        return ExitCode::FAILURE;
    }
    let reading = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || statement::pdf_rows(&pdf))
        .map(|thread| thread.join());
    let Ok(Ok(read)) = reading else { return ExitCode::FAILURE };
    match serde_json::to_writer(std::io::stdout().lock(), &read) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}
