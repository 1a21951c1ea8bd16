"""Training-log lines into training figures: one parser per framework's iteration line
(Megatron-LM and AMD Primus, TorchTitan, DeepSpeed, Hugging Face Trainer), the noise around
them (ANSI colours, rank prefixes) removed first; `parsing.parse_line` picks the parser."""
