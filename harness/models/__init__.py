"""Models: the catalog of entries and pins, offline tokenizers, pricing and admission.

Users import from here; the private modules behind it may move.
"""

from ._admission import Admission as Admission
from ._admission import Demand as Demand
from ._admission import Permit as Permit
from ._bucket import TokenBucket as TokenBucket
from ._calibration import CALIBRATION_ROLES as CALIBRATION_ROLES
from ._calibration import Calibration as Calibration
from ._calibration import IsotonicMap as IsotonicMap
from ._calibration import PlattMap as PlattMap
from ._calibration import RoleMap as RoleMap
from ._calibration import TemperatureMap as TemperatureMap
from ._calibration import calibration_from_table as calibration_from_table
from ._calibration import logit as logit
from ._calibration import role_of as role_of
from ._calibration import sigmoid as sigmoid
from ._catalog import CATALOG_ENV as CATALOG_ENV
from ._catalog import DECISION as DECISION
from ._catalog import Catalog as Catalog
from ._catalog import default_catalog as default_catalog
from ._catalog import load_catalog as load_catalog
from ._entry import DEFAULT_PATHS as DEFAULT_PATHS
from ._entry import PROVIDERS as PROVIDERS
from ._entry import CatalogEntry as CatalogEntry
from ._entry import CatalogError as CatalogError
from ._entry import RetrySettings as RetrySettings
from ._entry import retry_rules as retry_rules
from ._env import ENVIRONMENT_VARIABLES as ENVIRONMENT_VARIABLES
from ._env import TYPESAFE_ENTRY as TYPESAFE_ENTRY
from ._env import Environment as Environment
from ._env import Setting as Setting
from ._env import entry_for_model as entry_for_model
from ._env import read_environment as read_environment
from ._gate import AdmissionError as AdmissionError
from ._gate import Gate as Gate
from ._pricing import ContextCeilingError as ContextCeilingError
from ._pricing import CountedBy as CountedBy
from ._pricing import Reservation as Reservation
from ._pricing import check_ceiling as check_ceiling
from ._pricing import count_tokens as count_tokens
from ._pricing import needs_count as needs_count
from ._pricing import price as price
from ._pricing import reserve as reserve
from ._tokenizers import KNOWN_ENCODINGS as KNOWN_ENCODINGS
from ._tokenizers import Tokenizer as Tokenizer
from ._tokenizers import TokenizerError as TokenizerError
from ._tokenizers import load_tokenizer as load_tokenizer
from ._tokenizers import tokenizer as tokenizer
