"""Screens pushed over the chat: the approval modal."""
