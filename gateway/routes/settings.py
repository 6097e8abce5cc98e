"""Filled in by step 9."""

from fastapi import APIRouter

router = APIRouter()
