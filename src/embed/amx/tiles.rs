//! The tile instructions themselves, on x86-64 Linux: finding the unit,
//! asking the kernel for its state, and the product's inner loop.

use std::arch::asm;
use std::arch::x86_64::__cpuid_count;
use std::cell::RefCell;

use super::{bf16, Aligned, Packed, BLOCK, STEP, TILE};

/// CPUID leaf 7's EDX bits for AMX with bf16 and for the tiles.
const AMX_BF16: u32 = 1 << 22;
const AMX_TILE: u32 = 1 << 24;
/// `arch_prctl` asking for an extended state component, and the
/// component number of the tile data.
const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
const XFEATURE_XTILEDATA: libc::c_long = 18;

/// True when the CPU has AMX bf16 and Linux grants this process the tile
/// state (the request is process-wide and idempotent).
pub(super) fn enable() -> bool {
    // Leaf 7 exists where leaf 0 says so, which is checked first.
    let has = __cpuid_count(0, 0).eax >= 7 && {
        let edx = __cpuid_count(7, 0).edx;
        edx & (AMX_BF16 | AMX_TILE) == AMX_BF16 | AMX_TILE
    };
    // SAFETY: arch_prctl with these arguments only changes which state the
    // kernel saves for this process; it fails (non-zero) on kernels
    // without AMX support, which is then not used.
    has && is_x86_feature_detected!("avx512bf16")
        && unsafe {
            libc::syscall(
                libc::SYS_arch_prctl,
                ARCH_REQ_XCOMP_PERM,
                XFEATURE_XTILEDATA,
            )
        } == 0
}

/// The tile configuration: palette 1, every tile 16 rows of 64 bytes.
/// Tiles 0-3 hold a 32 × 32 block of sums, 4-5 two 16-row strips of
/// inputs, 6-7 two 16-output strips of weights.
#[repr(C, align(64))]
struct Config([u8; 64]);

const CONFIG: Config = {
    let mut bytes = [0u8; 64];
    bytes[0] = 1;
    let mut tile = 0;
    while tile < 8 {
        bytes[16 + 2 * tile] = 64;
        bytes[48 + tile] = 16;
        tile += 1;
    }
    Config(bytes)
};

thread_local! {
    /// Each worker's 32 rows of inputs in bf16.
    static ROUNDED: RefCell<Aligned<u16>> = RefCell::new(Aligned::default());
}

/// Runs `f` with [`CONFIG`] loaded on this thread's tiles, then releases
/// them.
pub(super) fn with_tiles<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: the configuration is valid for palette 1 (8 tiles of 16
    // rows × 64 bytes); callers run only where `enable` was true, so the
    // process may use tile state.
    unsafe { asm!("ldtilecfg [{}]", in(reg) CONFIG.0.as_ptr(), options(nostack)) };
    let result = f();
    // SAFETY: returns the tiles to their initial state, so the kernel
    // need not save them at the next switch.
    unsafe { asm!("tilerelease", options(nostack)) };
    result
}

/// Rounds `rows` (each `k` long) into `dst` (BLOCK rows of `kp`), 16
/// values per conversion instruction, padding with zeros: the columns past
/// `k`, and the rows past the last given.
fn round_block(dst: &mut [u16], rows: &[f32], k: usize, kp: usize) {
    let whole = k / 16 * 16;
    let mut given = rows.chunks_exact(k);
    for to in dst.chunks_exact_mut(kp) {
        let Some(from) = given.next() else {
            to.fill(0);
            continue;
        };
        // SAFETY: `enable` checked AVX-512 BF16 (and with it AVX-512F)
        // before any product runs.
        unsafe { round_avx512(&mut to[..whole], &from[..whole]) };
        to[whole..k]
            .iter_mut()
            .zip(&from[whole..])
            .for_each(|(t, &f)| *t = bf16(f));
        to[k..].fill(0);
    }
}

/// `dst = bf16(src)` to nearest even, both a multiple of 16 long.
#[target_feature(enable = "avx512f,avx512bf16")]
pub(super) fn round_avx512(dst: &mut [u16], src: &[f32]) {
    use std::arch::x86_64::{
        __m256bh, __m256i, _mm256_storeu_si256, _mm512_cvtneps_pbh, _mm512_loadu_ps,
    };
    for (to, from) in dst.chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        // SAFETY: both chunks hold 16 values: 64 bytes read, 32 written.
        unsafe {
            let rounded = _mm512_cvtneps_pbh(_mm512_loadu_ps(from.as_ptr()));
            _mm256_storeu_si256(
                to.as_mut_ptr().cast::<__m256i>(),
                std::mem::transmute::<__m256bh, __m256i>(rounded),
            );
        }
    }
}

/// Writes `out` (whole blocks of 32 rows of the padded outputs) for the
/// rows of `input` (at most as many; missing rows count as zeros), each
/// row of sums starting from `start` (padded outputs long).
#[inline(never)]
pub(super) fn run(out: &mut [f32], input: &[f32], weight: &Packed, start: &[f32]) {
    let (np, kp) = weight.padded();
    let k = weight.inputs;
    let steps = kp / STEP;
    assert!(
        out.len().is_multiple_of(BLOCK * np)
            && input.len() <= out.len() / np * k
            && start.len() == np
            && weight.tiles.len() == np * kp,
        "amx: shapes"
    );
    ROUNDED.with(|rounded| {
        let mut rounded = rounded.borrow_mut();
        rounded.resize(BLOCK * kp);
        // `enable` was true: `product` checks it.
        with_tiles(|| {
            for (block, sums) in out.chunks_exact_mut(BLOCK * np).enumerate() {
                let rows = input.get(block * BLOCK * k..).unwrap_or(&[]);
                round_block(&mut rounded, &rows[..rows.len().min(BLOCK * k)], k, kp);
                for first in (0..np).step_by(BLOCK) {
                    // SAFETY: `rounded` is 32 rows of `kp` values; the weight
                    // tiles of outputs `first..first + 32` are `2 · steps`
                    // tiles from `first / 16 · steps`, inside `weight.tiles`
                    // (np · kp values); `sums` is 32 rows of `np` floats and
                    // `start` `np` floats, so the 32 × 32 block at column
                    // `first` is inside both.
                    unsafe {
                        block_product(
                            sums.as_mut_ptr().add(first),
                            np,
                            rounded.as_ptr(),
                            kp,
                            Strip {
                                tiles: weight.tiles.as_ptr().add(first / 16 * steps * TILE),
                                steps,
                                start: Some(start.as_ptr().add(first)),
                            },
                            |_| {},
                        );
                    }
                }
            }
        });
    });
}

/// Rounds the first `blocks` blocks of 32 rows of `rows` (each `k` long;
/// missing rows count as zeros) into `dst`'s blocks of 32 rows of `kp`.
pub(super) fn round_blocks(dst: &mut [u16], rows: &[f32], blocks: usize, k: usize, kp: usize) {
    for (b, to) in dst.chunks_exact_mut(BLOCK * kp).take(blocks).enumerate() {
        let rows = rows.get(b * BLOCK * k..).unwrap_or(&[]);
        round_block(to, &rows[..rows.len().min(BLOCK * k)], k, kp);
    }
}

/// The weight side of a [`block_product`]: 32 outputs of a packed weight
/// (two strips of 16), their sums' starting values.
#[derive(Clone, Copy)]
pub(super) struct Strip {
    /// The first of the strips' tiles: `steps` tiles of the first 16
    /// outputs, then `steps` of the next 16.
    pub tiles: *const u16,
    /// Steps of 32 inputs.
    pub steps: usize,
    /// 32 starting sums (repeated on every row); zeros for `None`.
    pub start: Option<*const f32>,
}

/// One 32 × 32 block of sums: `sums` (row stride `ld` floats) = the
/// strip's starting sums + the 32 rows at `inputs` (row stride `kp` bf16)
/// times the strip's 32 outputs. `between(step)` runs after each step's
/// products are issued: vector work that does not wait on them (the
/// matrix unit and the vector units run side by side) fits there.
///
/// # Safety
/// The tile configuration of [`CONFIG`] is loaded on this thread, and every
/// address the loop reads or writes lies in its caller's buffers.
#[inline(always)]
pub(super) unsafe fn block_product(
    sums: *mut f32,
    ld: usize,
    inputs: *const u16,
    kp: usize,
    strip: Strip,
    mut between: impl FnMut(usize),
) {
    let Strip {
        tiles: weights,
        steps,
        start,
    } = strip;
    let second = weights.add(steps * TILE);
    match start {
        Some(start) => asm!(
            "tileloadd tmm0, [{s0} + {zero}*1]",
            "tileloadd tmm1, [{s1} + {zero}*1]",
            "tileloadd tmm2, [{s0} + {zero}*1]",
            "tileloadd tmm3, [{s1} + {zero}*1]",
            s0 = in(reg) start,
            s1 = in(reg) start.add(16),
            zero = in(reg) 0usize,
            options(nostack, readonly),
        ),
        None => asm!(
            "tilezero tmm0",
            "tilezero tmm1",
            "tilezero tmm2",
            "tilezero tmm3",
            options(nostack, nomem),
        ),
    }
    let row_bytes = kp * 2;
    for step in 0..steps {
        // Each load is followed by the products that wait for it, so the
        // unit starts on the first while the others arrive; the weights'
        // next two tiles (from L2: the inputs' rows stay in L1 across the
        // output columns) are asked for meanwhile. In a microbenchmark of
        // the encoder's four product shapes over 2,048 rows, one and two
        // threads: 5-40% faster than four loads then four products (a
        // noisy machine).
        let next = (step + 1).min(steps - 1);
        prefetch_tile(weights.add(next * TILE));
        prefetch_tile(second.add(next * TILE));
        asm!(
            "tileloadd tmm4, [{a0} + {lda}*1]",
            "tileloadd tmm6, [{b0} + {ldb}*1]",
            "tdpbf16ps tmm0, tmm4, tmm6",
            "tileloadd tmm7, [{b1} + {ldb}*1]",
            "tdpbf16ps tmm1, tmm4, tmm7",
            "tileloadd tmm5, [{a1} + {lda}*1]",
            "tdpbf16ps tmm2, tmm5, tmm6",
            "tdpbf16ps tmm3, tmm5, tmm7",
            a0 = in(reg) inputs.add(step * STEP),
            a1 = in(reg) inputs.add(16 * kp + step * STEP),
            b0 = in(reg) weights.add(step * TILE),
            b1 = in(reg) second.add(step * TILE),
            lda = in(reg) row_bytes,
            ldb = in(reg) 64usize,
            options(nostack, readonly),
        );
        between(step);
    }
    let ldc = ld * 4;
    asm!(
        "tilestored [{c0} + {ldc}*1], tmm0",
        "tilestored [{c1} + {ldc}*1], tmm1",
        "tilestored [{c2} + {ldc}*1], tmm2",
        "tilestored [{c3} + {ldc}*1], tmm3",
        c0 = in(reg) sums,
        c1 = in(reg) sums.add(16),
        c2 = in(reg) sums.add(16 * ld),
        c3 = in(reg) sums.add(16 * ld + 16),
        ldc = in(reg) ldc,
        options(nostack),
    );
}

/// Asks for the 1 KiB packed tile at `tile` in L1, one cache line at a time.
#[inline(always)]
fn prefetch_tile(tile: *const u16) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    for line in 0..16 {
        // SAFETY: a prefetch reads nothing architecturally and never
        // faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(tile.wrapping_add(line * 32).cast::<i8>()) };
    }
}
