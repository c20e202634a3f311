//! Products of f32 matrices by gemm, for the mapped encoder: strided
//! views into borrowed slices (the weights stay where the mapping put
//! them), split over rayon's pool by columns when big enough to pay.

use candle_core::{CpuStorage, Layout, Result, Storage};
use rayon::prelude::*;

/// The values of a contiguous f32 tensor on the CPU, from its storage and
/// layout (`Tensor::storage_and_layout`); `what` names the caller in the
/// error otherwise.
pub(super) fn cpu_values<'a>(
    storage: &'a Storage,
    layout: &Layout,
    what: &str,
) -> Result<&'a [f32]> {
    let Storage::Cpu(CpuStorage::F32(data)) = storage else {
        candle_core::bail!("{what}: f32 on the CPU only");
    };
    let Some((start, end)) = layout.contiguous_offsets() else {
        candle_core::bail!("{what}: contiguous operands only");
    };
    Ok(&data[start..end])
}

/// `input · weightᵀ + bias` for row-major `input` (rows × in) and a
/// PyTorch `weight` (out × in).
pub(super) fn linear(input: &[f32], weight: &[f32], bias: &[f32]) -> Result<Vec<f32>> {
    let mut out = product(input, weight, bias.len())?;
    for row in out.chunks_exact_mut(bias.len()) {
        row.iter_mut().zip(bias).for_each(|(o, b)| *o += b);
    }
    Ok(out)
}

/// `input · weightᵀ` for row-major `input` (rows × in) and a PyTorch
/// `weight` (outputs × in).
pub(super) fn product(input: &[f32], weight: &[f32], outputs: usize) -> Result<Vec<f32>> {
    if outputs == 0 || !weight.len().is_multiple_of(outputs) {
        candle_core::bail!("weight of {} for {outputs} outputs", weight.len());
    }
    let inputs = weight.len() / outputs;
    if inputs == 0 || !input.len().is_multiple_of(inputs) {
        candle_core::bail!("input of {} for {inputs} features", input.len());
    }
    let rows = input.len() / inputs;
    let mut out = vec![0f32; rows * outputs];
    matmul(
        &mut out,
        outputs,
        Matrix::new(input, rows, inputs),
        Matrix::new(weight, outputs, inputs).transposed(),
    );
    Ok(out)
}

/// A strided view of a matrix inside a slice: element (r, c) is at
/// `r * row_stride + c * col_stride`.
#[derive(Clone, Copy)]
pub(super) struct Matrix<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> Matrix<'a> {
    /// A row-major `rows × cols` matrix.
    pub(super) fn new(data: &'a [f32], rows: usize, cols: usize) -> Matrix<'a> {
        Matrix {
            data,
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// Columns `range` of this view.
    pub(super) fn column_range(self, range: std::ops::Range<usize>) -> Matrix<'a> {
        Matrix {
            data: &self.data[(range.start * self.col_stride).min(self.data.len())..],
            cols: range.len(),
            ..self
        }
    }

    pub(super) fn transposed(self) -> Matrix<'a> {
        Matrix {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    /// Whether every element the view names lies inside its slice.
    fn in_bounds(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || (self.rows - 1) * self.row_stride + (self.cols - 1) * self.col_stride
                < self.data.len()
    }
}

/// Products of at least this many multiply-adds are split by columns
/// over the rayon pool; smaller ones stay on the calling thread.
const SPLIT_WORK: usize = 1 << 20;

/// `dst = lhs · rhs`, `dst` row-major with `width` columns, by gemm.
///
/// Big products are split into column blocks, one per thread: for a query
/// the time goes to reading the weights, and each thread then reads its
/// share. gemm computes into a column-major buffer that is then transposed: for
/// a row-major destination it would swap the operands and repack the
/// whole weight matrix on every call, which for a query of a few tokens
/// costs more than the products themselves; this way it reads the weights
/// where they lie.
pub(super) fn matmul(dst: &mut [f32], width: usize, lhs: Matrix, rhs: Matrix) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert!(
        rhs.rows == k && width == n && dst.len() == m * n && lhs.in_bounds() && rhs.in_bounds(),
        "matmul shapes: {m}x{k} by {}x{n} into {} values",
        rhs.rows,
        dst.len()
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        dst.fill(0.0);
        return;
    }
    let mut columns = vec![0f32; m * n];
    let blocks = if m * n * k >= SPLIT_WORK {
        rayon::current_num_threads().clamp(1, n)
    } else {
        1
    };
    let block = n.div_ceil(blocks);
    // Column-major, so each block of columns is one contiguous chunk.
    columns
        .par_chunks_mut(block * m)
        .enumerate()
        .for_each(|(b, chunk)| {
            let first = b * block;
            let rhs = rhs.column_range(first..first + chunk.len() / m);
            gemm_columns(chunk, lhs, rhs);
        });
    for (c, column) in columns.chunks_exact(m).enumerate() {
        for (r, &value) in column.iter().enumerate() {
            dst[r * n + c] = value;
        }
    }
}

/// `dst = lhs · rhs` with `dst` column-major (column stride `lhs.rows`).
fn gemm_columns(dst: &mut [f32], lhs: Matrix, rhs: Matrix) {
    let (m, k, n) = (lhs.rows, lhs.cols, rhs.cols);
    assert!(rhs.rows == k && dst.len() == m * n && lhs.in_bounds() && rhs.in_bounds());
    // SAFETY: the assertion bounds every element gemm reads through `lhs`
    // and `rhs` (their views are in bounds) and the m·n values it writes
    // to `dst` (column stride m, row stride 1), a unique borrow; with
    // `read_dst` false the old contents are not read.
    unsafe {
        gemm_here(
            (m, n, k),
            (dst.as_mut_ptr(), m as isize, 1),
            (
                lhs.data.as_ptr(),
                lhs.col_stride as isize,
                lhs.row_stride as isize,
            ),
            (
                rhs.data.as_ptr(),
                rhs.col_stride as isize,
                rhs.row_stride as isize,
            ),
            1.0,
        );
    }
}

/// `dst (m × n) = scale · lhs (m × k) · rhs (k × n)` by gemm on this thread,
/// each operand given as a pointer with its column and row strides (in
/// elements); the old contents of `dst` are not read.
///
/// # Safety
/// Every element read through `lhs` and `rhs` and written through `dst`
/// at those strides is in bounds, and no one else touches that block of
/// `dst` meanwhile.
pub(super) unsafe fn gemm_here(
    (m, n, k): (usize, usize, usize),
    dst: (*mut f32, isize, isize),
    lhs: (*const f32, isize, isize),
    rhs: (*const f32, isize, isize),
    scale: f32,
) {
    // SAFETY: the caller's.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.0,
            dst.1,
            dst.2,
            false,
            lhs.0,
            lhs.1,
            lhs.2,
            rhs.0,
            rhs.1,
            rhs.2,
            0.0,
            scale,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(lhs: Matrix, rhs: Matrix) -> Vec<f32> {
        let mut out = Vec::new();
        for r in 0..lhs.rows {
            for c in 0..rhs.cols {
                let mut sum = 0f32;
                for i in 0..lhs.cols {
                    sum += lhs.data[r * lhs.row_stride + i * lhs.col_stride]
                        * rhs.data[i * rhs.row_stride + c * rhs.col_stride];
                }
                out.push(sum);
            }
        }
        out
    }

    #[test]
    fn strided_matmul_matches_the_definition() {
        let a: Vec<f32> = (0..7 * 12)
            .map(|i| ((i * 37) % 23) as f32 / 7.0 - 1.5)
            .collect();
        let b: Vec<f32> = (0..5 * 12)
            .map(|i| ((i * 11) % 17) as f32 / 5.0 - 1.0)
            .collect();
        // Columns 4..9 of a 7x12 matrix times the transpose of columns 4..9 of a 5x12 one.
        let lhs = Matrix::new(&a, 7, 12).column_range(4..9);
        let rhs = Matrix::new(&b, 5, 12).column_range(4..9).transposed();
        let mut out = vec![f32::NAN; 7 * 5];
        matmul(&mut out, 5, lhs, rhs);
        for (got, want) in out.iter().zip(naive(lhs, rhs)) {
            assert!((got - want).abs() < 1e-4, "{got} vs {want}");
        }
    }

    #[test]
    #[should_panic(expected = "matmul shapes")]
    fn out_of_bounds_views_are_refused() {
        let a = vec![1f32; 10];
        let lhs = Matrix::new(&a, 3, 4).column_range(2..4); // row 2 would end at index 11
        let mut out = vec![0f32; 3 * 3];
        matmul(&mut out, 3, lhs, Matrix::new(&a[..6], 2, 3));
    }
}
