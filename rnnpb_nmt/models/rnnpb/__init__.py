"""The bound RNNPB model (``--model=rnnpbnmt``): two RNNPB language models with bound PB spaces."""
