"""`tfx model show` writes its architecture integers through the one count formatter
(tfx.hw.units.format_count), with thousands separators as its parameter counts have: DeepSeek-V3
read 'hidden_size 7168', 'vocab_size 129280' above 'final norm 7,168'."""

from tfx.cli.cmd_model import show_lines
from tfx.model.presets import load_model


def test_deepseek_v3_architecture_rows_carry_separators():
    """models/deepseek-v3.toml (DeepSeek-V3 config.json): hidden_size 7168 -> "7,168",
    vocab_size 129280 -> "129,280", max_position_embeddings 163840 -> "163,840",
    q_lora_rank 1536 -> "1,536", intermediate_size 18432 -> "18,432", moe_intermediate_size
    2048 -> "2,048"; numbers below 1,000 are unchanged (61 layers, kv_lora_rank 512). The final
    norm, one RMSNorm weight of hidden_size, 7,168, reads as the hidden size does."""
    rows = {line[2:30].strip(): line[31:] for line in show_lines(load_model("deepseek-v3"))
            if line.startswith("  ") and len(line) > 31}
    assert rows["hidden_size"] == "7,168"
    assert rows["num_layers"] == "61"
    assert rows["vocab_size"] == "129,280  (untied lm head)"
    assert rows["positions"] == "rope, max 163,840 positions, theta 10000"
    assert rows["q_lora_rank"] == "1,536"
    assert rows["kv_lora_rank"] == "512"
    assert rows["intermediate_size"] == "18,432"
    assert rows["experts"] == "256 routed, top-8, width 2,048"
    assert rows["shared experts"] == "1, width 2,048"
    assert rows["final norm"] == "7,168"
