//! Picking the device the model runs on. CUDA and Metal exist only in builds
//! with the `cuda` or `metal` feature; asking for one the build or the
//! machine lacks is an error, never a silent fall-back to the CPU. `auto`
//! takes the CPU when no GPU answers, and says so in a build that has a
//! GPU backend (in a CPU-only build there is nothing to say).

use candle_core::Device;

use crate::error::{Error, Result};

/// The device asked for on the command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The first GPU this build supports and the machine has, else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// The first CUDA GPU (needs the `cuda` feature).
    Cuda,
    /// The Metal GPU (needs the `metal` feature).
    Metal,
}

/// Opens the device for `choice`; `note` hears why `auto` fell back to
/// the CPU in a build with a GPU backend.
pub fn select(choice: DeviceChoice, note: &dyn Fn(&str)) -> Result<Device> {
    match choice {
        DeviceChoice::Cpu => Ok(Device::Cpu),
        DeviceChoice::Cuda => cuda(),
        DeviceChoice::Metal => metal(),
        DeviceChoice::Auto => {
            let errors = match cuda() {
                Ok(device) => return Ok(device),
                Err(cuda) => match metal() {
                    Ok(device) => return Ok(device),
                    Err(metal) => [
                        (cfg!(feature = "cuda"), cuda),
                        (cfg!(feature = "metal"), metal),
                    ],
                },
            };
            let compiled: Vec<String> = errors
                .into_iter()
                .filter_map(|(built, error)| built.then(|| error.to_string()))
                .collect();
            if !compiled.is_empty() {
                note(&format!("{}; embedding on the CPU", compiled.join("; ")));
            }
            Ok(Device::Cpu)
        }
    }
}

/// A short name for `device`, for messages and `info`.
pub fn name(device: &Device) -> &'static str {
    match device {
        Device::Cpu => "cpu",
        Device::Cuda(_) => "cuda",
        Device::Metal(_) => "metal",
    }
}

#[cfg(feature = "cuda")]
fn cuda() -> Result<Device> {
    let device = Device::new_cuda(0).map_err(|e| Error::Device {
        device: "cuda".into(),
        reason: format!(
            "no usable GPU answers ({})",
            crate::error::candle_message(e)
        ),
    })?;
    if let Device::Cuda(cuda) = &device {
        super::kernels::precompile(cuda);
    }
    Ok(device)
}

#[cfg(not(feature = "cuda"))]
fn cuda() -> Result<Device> {
    Err(Error::Device {
        device: "cuda".into(),
        reason: "this build has no CUDA support; rebuild with `--features cuda`".into(),
    })
}

#[cfg(feature = "metal")]
fn metal() -> Result<Device> {
    Device::new_metal(0).map_err(|e| Error::Device {
        device: "metal".into(),
        reason: crate::error::candle_message(e),
    })
}

#[cfg(not(feature = "metal"))]
fn metal() -> Result<Device> {
    Err(Error::Device {
        device: "metal".into(),
        reason: "this build has no Metal support; rebuild with `--features metal`".into(),
    })
}
