//! The C heap under bulk work on the CPU. A batch's activations are tens
//! of megabytes, made and dropped for every layer. glibc's malloc serves
//! blocks that big with fresh mappings (its threshold moves with what was
//! freed before) and hands freed heap tops back to the kernel, so the same
//! memory is mapped, faulted in page by page and returned again, batch
//! after batch: indexing the seeds took 2.4 million page faults and 2.5 s of
//! system time. Fixing the threshold at glibc's largest (32 MiB) and keeping
//! freed memory took that to 44 thousand faults and 0.1 s.
//!
//! The process keeps its high-water mark instead of returning it, which is
//! what a bulk run wants; nothing else calls this.

/// The largest block glibc will serve from its heaps: its ceiling for
/// `M_MMAP_THRESHOLD` on 64-bit targets.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Tunes the heap for bulk embedding, once per process. Elsewhere than
/// glibc, nothing to do.
pub fn tune_for_bulk_work() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: mallopt only sets malloc's parameters; it is called
            // before the bulk allocations, and a refusal (0) leaves the
            // defaults, which are correct, only slower.
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
                libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
            }
        });
    }
}
