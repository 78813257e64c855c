"""The dense route's machinery: chunking, embeddings and the incremental faiss index."""
