//! Vectors: the one dot product every ranking uses (the cosine, since
//! stored vectors are unit length), and scaling a given vector to unit
//! length.

/// The dot product, in sixteen independent sums that the compiler turns
/// into vector instructions (one running sum cannot be reordered),
/// compiled for each SIMD level and picked by the processor at the first
/// call (`multiversion`, as the encoder's kernels are), with fused
/// multiply-adds where the processor has them.
#[multiversion::multiversion(targets = "simd")]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut sums = [0f32; LANES];
    let (a16, b16) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let rest: f32 = a16
        .remainder()
        .iter()
        .zip(b16.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a16.zip(b16) {
        for i in 0..LANES {
            // Fused where the processor fuses (a constant per version).
            if multiversion::target::target_cfg_f!(target_feature = "fma") {
                sums[i] = x[i].mul_add(y[i], sums[i]);
            } else {
                sums[i] += x[i] * y[i];
            }
        }
    }
    sums.iter().sum::<f32>() + rest
}

/// `v` scaled to unit length: stored as the model's own are (search ranks
/// by dot product), whatever the other tool did. The length is summed in
/// f64, so values near f32's limits neither overflow to infinity nor
/// vanish; a value that is not finite (JSON's `1e39` is infinite as f32),
/// or a vector of zeros (or of values too small to have a direction in
/// f32), is refused as that record's error.
pub fn unit(v: &[f32]) -> std::result::Result<Vec<f32>, String> {
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(format!(
            "value {} of the embedding is {}, not a finite 32-bit number",
            i + 1,
            v[i]
        ));
    }
    let norm = v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt();
    if norm == 0.0 {
        return Err("the embedding is all zeros".into());
    }
    let unit: Vec<f32> = v.iter().map(|&x| (f64::from(x) / norm) as f32).collect();
    // Denormal inputs can lose their direction in the cast back to f32.
    let back = unit.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>();
    if (back - 1.0).abs() > 1e-3 {
        return Err(format!(
            "the embedding's values are too small to give a direction (length {norm:e})"
        ));
    }
    Ok(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_dot_agrees_with_a_plain_sum() {
        let mut state = 0x2545_f491_u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32 - 0.5
        };
        let a = unit(&(0..385).map(|_| next()).collect::<Vec<_>>()).unwrap();
        let b = unit(&(0..385).map(|_| next()).collect::<Vec<_>>()).unwrap();
        let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        for len in [0, 7, 16, 33, 384, 385] {
            let plain_len: f32 = a[..len].iter().zip(&b[..len]).map(|(x, y)| x * y).sum();
            assert!(
                (dot(&a[..len], &b[..len]) - plain_len).abs() < 1e-5,
                "length {len}"
            );
        }
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5 && (dot(&a, &b) - plain).abs() < 1e-5);
    }

    #[test]
    fn unit_refuses_what_has_no_direction() {
        assert_eq!(unit(&[3.0, 4.0]).unwrap(), vec![0.6, 0.8]);
        assert!(unit(&[0.0, 0.0]).unwrap_err().contains("all zeros"));
        assert!(unit(&[f32::INFINITY, 1.0]).unwrap_err().contains("value 1"));
    }
}
