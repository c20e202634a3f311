//! Attention's softmax on the bf16 path, 32 query rows at a time while
//! their scores sit in L1, in AVX-512: the exponentials as powers of two
//! (the scale and log2(e) folded into the one multiply-add that shifts the
//! scores by their row's maximum), written in bf16 straight into the
//! layout P·V's tiles read, and left unnormalised: each row's 1 / sum
//! comes out beside them, for the context rows to be divided once.

use super::BLOCK;

/// For each of the first `rows` of 32 rows of `scores` (row stride
/// `padded`), the exponentials of `scale · (score − max)` over the first
/// `len` columns, in bf16 into `probs` (0 past `len`), and 1 / their sum
/// into `inverse`. The other rows of `probs` (queries past the sequence's
/// end, whose context is dropped) keep the finite values they held.
/// The exponential is computed as a power of two, `scale · log2(e)`
/// folded into the one multiply-add that shifts the scores: see [`exp2`].
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) fn softmax_rows(
    scores: &[f32],
    probs: &mut [u16],
    inverse: &mut [f32; BLOCK],
    rows: usize,
    padded: usize,
    len: usize,
    scale: f32,
) {
    use std::arch::x86_64::*;
    assert!(
        scores.len() >= BLOCK * padded
            && probs.len() >= BLOCK * padded
            && len <= padded
            && rows <= BLOCK
    );
    // Whole chunks of 16 real columns, then one partial chunk (its real
    // lanes), then zeros to `padded`.
    let whole = len / 16 * 16;
    let tail = ((1u32 << (len - whole)) - 1) as __mmask16;
    let factor = scale * std::f32::consts::LOG2_E;
    for (r, inverse) in inverse.iter_mut().enumerate().take(rows) {
        let row = &scores[r * padded..(r + 1) * padded];
        let out = &mut probs[r * padded..(r + 1) * padded];
        // SAFETY: every load and store below is of 16 values at a column
        // `at < padded`, a multiple of 16, inside the row (`padded` is a
        // multiple of 32).
        unsafe {
            let mut max = _mm512_set1_ps(f32::NEG_INFINITY);
            for at in (0..whole).step_by(16) {
                max = _mm512_max_ps(max, _mm512_loadu_ps(row.as_ptr().add(at)));
            }
            if whole < len {
                let v = _mm512_mask_loadu_ps(max, tail, row.as_ptr().add(whole));
                max = _mm512_max_ps(max, v);
            }
            let shift = _mm512_set1_ps(-_mm512_reduce_max_ps(max) * factor);
            let factor = _mm512_set1_ps(factor);
            let mut sum = _mm512_setzero_ps();
            let mut put = |at: usize, e: __m512| {
                let rounded: __m256i = std::mem::transmute(_mm512_cvtneps_pbh(e));
                _mm256_storeu_si256(out.as_mut_ptr().add(at).cast(), rounded);
            };
            for at in (0..whole).step_by(16) {
                let x = _mm512_fmadd_ps(_mm512_loadu_ps(row.as_ptr().add(at)), factor, shift);
                let e = exp2(x);
                sum = _mm512_add_ps(sum, e);
                put(at, e);
            }
            let mut at = whole;
            if whole < len {
                let x = _mm512_fmadd_ps(_mm512_loadu_ps(row.as_ptr().add(at)), factor, shift);
                let e = _mm512_maskz_mov_ps(tail, exp2(x));
                sum = _mm512_add_ps(sum, e);
                put(at, e);
                at += 16;
            }
            while at < padded {
                put(at, _mm512_setzero_ps());
                at += 16;
            }
            *inverse = 1.0 / _mm512_reduce_add_ps(sum);
        }
    }
}

/// 2^x for x <= 0 in 16 lanes: x = n + r with n an integer and |r| <= 1/2
/// (exact), 2^r a degree-4 polynomial (coefficients fitted here to the
/// least maximum relative error on [−1/2, 1/2]: 2.6e-6, far below bf16's
/// 2^-9 rounding of the result), and `vscalefps` for 2^n, which gives 0
/// where 2^x is below the smallest float.
#[target_feature(enable = "avx512f")]
fn exp2(x: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    // Round to nearest, exceptions suppressed.
    let n = _mm512_roundscale_ps::<0x08>(x);
    let r = _mm512_sub_ps(x, n);
    let mut p = _mm512_set1_ps(EXP2[0]);
    for c in &EXP2[1..] {
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(*c));
    }
    _mm512_scalef_ps(p, n)
}

/// [`exp2`]'s polynomial, highest power first.
const EXP2: [f32; 5] = [
    0.009_570_069,
    0.055_917_807,
    0.240_247_44,
    0.693_121_85,
    0.999_999_3,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The power of two against f64's over the range softmax uses, down
    /// through the subnormals to where the result is 0.
    #[test]
    fn exp2_is_within_its_stated_error() {
        if !super::super::available() {
            eprintln!("skipped: this processor or system offers no AMX bf16 tiles");
            return;
        }
        let xs: Vec<f32> = (0..16 * 4000).map(|i| -(i as f32) * 0.002_1).collect();
        for chunk in xs.chunks_exact(16) {
            let mut got = [0f32; 16];
            // SAFETY: `available` implies AVX-512F; 16 values each way.
            unsafe {
                use std::arch::x86_64::*;
                _mm512_storeu_ps(got.as_mut_ptr(), exp2(_mm512_loadu_ps(chunk.as_ptr())));
            }
            for (&x, &g) in chunk.iter().zip(&got) {
                let want = f64::from(x).exp2();
                // Below 2^-126 the floats are subnormal: fewer digits.
                let error = (f64::from(g) - want).abs() / want;
                let bound = if x > -126.0 { 4e-6 } else { 1e-2 };
                assert!(error < bound, "2^{x}: {g} vs {want}");
            }
        }
        let mut tiny = [0f32; 16];
        // SAFETY: as above.
        unsafe {
            use std::arch::x86_64::*;
            _mm512_storeu_ps(tiny.as_mut_ptr(), exp2(_mm512_set1_ps(-200.0)));
        }
        assert!(tiny.iter().all(|&t| t == 0.0));
    }
}
