{-# LANGUAGE OverloadedStrings #-}
-- | A variant's options, as the request carries them (target.toml's options
-- table). An option a workload does not know is an error naming it and
-- listing what the workload knows, never silently ignored: a worker that
-- ignored one would measure something else than its variant says. The list
-- is what tests/test_conformance.py checks against target.toml.
module Msgbench.Options (optionsKnown, optionBool, optionText) where

import Data.Aeson (Value (..), encode)
import qualified Data.Aeson.Key as Key
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString.Lazy.Char8 as BL
import Data.List (intercalate, sort)
import Data.Text (Text)
import qualified Data.Text as T
import Msgbench.Protocol (Kind (..), Request (..), failWith)

-- | Refuses every option not in known: "unknown option a, b (known here: x, y)",
-- "none" when the workload reads no option.
optionsKnown :: Request -> [Text] -> IO ()
optionsKnown req known =
  case sort [k | k <- map Key.toText (KM.keys (reqOptions req)), k `notElem` known] of
    [] -> pure ()
    unknown ->
      failWith Internal $
        "unknown option " ++ commas unknown ++ " for workload " ++ T.unpack (reqWorkload req)
          ++ " (known here: " ++ (if null known then "none" else commas known) ++ ")"
  where
    commas = intercalate ", " . map T.unpack

-- | A boolean option, False when absent.
optionBool :: Request -> Text -> IO Bool
optionBool req name = case KM.lookup (Key.fromText name) (reqOptions req) of
  Nothing -> pure False
  Just (Bool b) -> pure b
  Just v -> wrongKind name v "true or false"

-- | A string option, the default when absent.
optionText :: Request -> Text -> Text -> IO Text
optionText req name def = case KM.lookup (Key.fromText name) (reqOptions req) of
  Nothing -> pure def
  Just (String s) -> pure s
  Just v -> wrongKind name v "a string"

wrongKind :: Text -> Value -> String -> IO a
wrongKind name v expected =
  failWith Internal ("option " ++ T.unpack name ++ " = " ++ BL.unpack (encode v) ++ ": expected " ++ expected)
