"""Compliance passports: a freelancer's verifications, scored, shared through share-tokens and signed as JWS."""
