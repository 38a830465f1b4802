"""The deployment path: torch.export and AOTInductor failures, bisected along the export ladder."""
