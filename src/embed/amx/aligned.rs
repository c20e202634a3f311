//! Buffers that start on a cache line, for what the tiles load and store.
//!
//! A tile row is 64 bytes. Loaded from an address that is not a multiple
//! of 64, each row spans two cache lines, and a tile load reads 32 lines
//! instead of 16. `Vec<u16>` and `Vec<f32>` start wherever the allocator
//! puts them (16 bytes past a line, often): in a microbenchmark of the
//! tile loop alone (one core, 2,048 × 384 by 384 × 1,536, nothing stored),
//! aligning the inputs' buffer took it from 810-840 to 1,300-1,440 GFLOP/s.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// One cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Types for which every bit pattern is a value, and all-zero bytes are
/// zero.
///
/// # Safety
/// Implement only for such types: [`Aligned`] hands out its bytes as them.
pub(super) unsafe trait Plain: Copy {}
// SAFETY: every 16 bits are a u16, and zero bytes are 0.
unsafe impl Plain for u16 {}
// SAFETY: every 32 bits are an f32 (NaNs included), and zero bytes are 0.0.
unsafe impl Plain for f32 {}

/// A growable buffer of `T` whose first value starts a cache line.
pub(super) struct Aligned<T: Plain> {
    lines: Vec<Line>,
    len: usize,
    values: PhantomData<T>,
}

impl<T: Plain> Default for Aligned<T> {
    fn default() -> Self {
        Aligned {
            lines: Vec::new(),
            len: 0,
            values: PhantomData,
        }
    }
}

impl<T: Plain> Aligned<T> {
    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        let mut buffer = Aligned::default();
        buffer.resize(len);
        buffer
    }

    /// Resizes to `len` values, as `Vec::resize(len, 0)` does: the first
    /// ones are kept, the new ones are zero.
    pub fn resize(&mut self, len: usize) {
        let lines = (len * size_of::<T>()).div_ceil(size_of::<Line>());
        if lines > self.lines.len() {
            self.lines.resize(lines, Line([0; 64]));
        }
        let old = self.len;
        self.len = len;
        if len > old {
            // Values past a shrink may still be there: zero them.
            // SAFETY: `old..len` lies inside `lines` (sized above), and
            // zero bytes are a valid `T` (`Plain`).
            unsafe {
                std::ptr::write_bytes(self.lines.as_mut_ptr().cast::<T>().add(old), 0, len - old)
            };
        }
    }
}

impl<T: Plain> Deref for Aligned<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `len` values of `T` fit in `lines` (`resize`), every bit
        // pattern is a `T`, and a line's alignment (64) is a multiple of
        // `T`'s.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr().cast::<T>(), self.len) }
    }
}

impl<T: Plain> DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, through the only borrow of `lines`.
        unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<T>(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_on_a_line_and_grows_with_zeros_like_a_vec() {
        let mut buffer: Aligned<u16> = Aligned::default();
        assert!(buffer.is_empty());
        buffer.resize(40);
        assert_eq!(buffer.as_ptr() as usize % 64, 0);
        buffer
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as u16 + 1);
        buffer.resize(10);
        assert_eq!(&buffer[..], &(1..=10).collect::<Vec<u16>>()[..]);
        buffer.resize(100);
        assert_eq!(buffer.len(), 100);
        assert_eq!(&buffer[..10], &(1..=10).collect::<Vec<u16>>()[..]);
        assert!(buffer[10..].iter().all(|&x| x == 0));
        assert_eq!(buffer.as_ptr() as usize % 64, 0);
        buffer.resize(0);
        buffer.resize(3);
        assert_eq!(&buffer[..], &[0, 0, 0]);
        let floats: Aligned<f32> = Aligned::zeroed(17);
        assert_eq!(floats.as_ptr() as usize % 64, 0);
        assert!(floats.iter().all(|&x| x == 0.0));
    }
}
