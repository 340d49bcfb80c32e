"""The catalog: entries and pins, the environment's configuration, offline tokenizers and
pricing (what a call costs and reserves). Admission (gates, buckets) is :mod:`harness.admission`.

Users import from here; the private modules behind it may move.
"""

from harness.catalog._calibration import CALIBRATION_ROLES as CALIBRATION_ROLES
from harness.catalog._calibration import Calibration as Calibration
from harness.catalog._calibration import IsotonicMap as IsotonicMap
from harness.catalog._calibration import PlattMap as PlattMap
from harness.catalog._calibration import RoleMap as RoleMap
from harness.catalog._calibration import TemperatureMap as TemperatureMap
from harness.catalog._calibration import calibration_from_table as calibration_from_table
from harness.catalog._calibration import logit as logit
from harness.catalog._calibration import role_of as role_of
from harness.catalog._calibration import sigmoid as sigmoid
from harness.catalog._catalog import DECISION as DECISION
from harness.catalog._catalog import Catalog as Catalog
from harness.catalog._catalog_file import CATALOG_ENV as CATALOG_ENV
from harness.catalog._catalog_file import default_catalog as default_catalog
from harness.catalog._catalog_file import load_catalog as load_catalog
from harness.catalog._entry import DEFAULT_DECISION_TIMEOUT as DEFAULT_DECISION_TIMEOUT
from harness.catalog._entry import DEFAULT_PATHS as DEFAULT_PATHS
from harness.catalog._entry import IN_PROCESS_PROVIDERS as IN_PROCESS_PROVIDERS
from harness.catalog._entry import PROVIDERS as PROVIDERS
from harness.catalog._entry import CatalogEntry as CatalogEntry
from harness.catalog._entry import CatalogError as CatalogError
from harness.catalog._entry import RetrySettings as RetrySettings
from harness.catalog._entry import retry_rules as retry_rules
from harness.catalog._env import ENVIRONMENT_VARIABLES as ENVIRONMENT_VARIABLES
from harness.catalog._env import HARNESS_CATALOG as HARNESS_CATALOG
from harness.catalog._env import OPENAI_API_KEY as OPENAI_API_KEY
from harness.catalog._env import OPENAI_BASE_URL as OPENAI_BASE_URL
from harness.catalog._env import TYPESAFE_API_KEY as TYPESAFE_API_KEY
from harness.catalog._env import TYPESAFE_BASE_URL as TYPESAFE_BASE_URL
from harness.catalog._env import TYPESAFE_DEFAULT_MODEL as TYPESAFE_DEFAULT_MODEL
from harness.catalog._env import TYPESAFE_ENTRY as TYPESAFE_ENTRY
from harness.catalog._env import Environment as Environment
from harness.catalog._env import Setting as Setting
from harness.catalog._env import entry_for_model as entry_for_model
from harness.catalog._env import read_environment as read_environment
from harness.catalog._examples import DrawnFrom as DrawnFrom
from harness.catalog._examples import ExampleSet as ExampleSet
from harness.catalog._examples import SolvedExample as SolvedExample
from harness.catalog._examples import examples_from_table as examples_from_table
from harness.catalog._examples import state_key as state_key
from harness.catalog._examples import state_text as state_text
from harness.catalog._examples import write_examples as write_examples
from harness.catalog._pricing import ContextCeilingError as ContextCeilingError
from harness.catalog._pricing import CountedBy as CountedBy
from harness.catalog._pricing import Reservation as Reservation
from harness.catalog._pricing import check_ceiling as check_ceiling
from harness.catalog._pricing import count_tokens as count_tokens
from harness.catalog._pricing import count_with_model as count_with_model
from harness.catalog._pricing import needs_count as needs_count
from harness.catalog._pricing import price as price
from harness.catalog._pricing import reserve as reserve
from harness.catalog._tokenizers import KNOWN_ENCODINGS as KNOWN_ENCODINGS
from harness.catalog._tokenizers import Tokenizer as Tokenizer
from harness.catalog._tokenizers import TokenizerError as TokenizerError
from harness.catalog._tokenizers import load_tokenizer as load_tokenizer
from harness.catalog._tokenizers import tokenizer as tokenizer
