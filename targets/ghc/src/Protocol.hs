{-# LANGUAGE OverloadedStrings #-}
-- | The worker contract (spec/README.md): one JSON request in, JSON lines out.
module Protocol
  ( Kind (..)
  , WorkerError (..)
  , Request (..)
  , Result (..)
  , failWith
  , readRequest
  , param
  , optionsKnown
  , optionBool
  , optionText
  , say
  , helloLine
  , errorLine
  , resultLine
  , emptyResult
  ) where

import Control.Exception (Exception, throwIO)
import Data.Aeson (FromJSON, Value (..), eitherDecodeStrict', encode, object, (.=))
import qualified Data.Aeson.Key as Key
import qualified Data.Aeson.KeyMap as KM
import Data.Aeson.Types (parseEither, parseJSON)
import qualified Data.ByteString as B
import qualified Data.ByteString.Lazy.Char8 as BL
import Data.Int (Int64)
import Data.Text (Text)
import qualified Data.Text as T
import System.IO (hFlush, stdout)

-- | The error kinds a contract-2 worker may answer.
data Kind = Unsupported | Resource | Internal deriving (Eq, Show)

kindName :: Kind -> Text
kindName Unsupported = "unsupported"
kindName Resource = "resource"
kindName Internal = "internal"

-- | A reported error: thrown by a workload, caught by the worker loop.
data WorkerError = WorkerError Kind String deriving (Show)

instance Exception WorkerError

failWith :: Kind -> String -> IO a
failWith k msg = throwIO (WorkerError k msg)

data Request = Request
  { reqWorkload :: Text
  , reqVariant :: Text
  , reqOptions :: KM.KeyMap Value
  , reqParams :: KM.KeyMap Value
  , reqRaw :: B.ByteString
  }

-- | Parses the one request line; a malformed one is an internal error.
readRequest :: B.ByteString -> Either String Request
readRequest line = do
  v <- eitherDecodeStrict' line
  case v of
    Object o -> do
      workload <- str o "workload"
      variant <- str o "variant"
      opts <- obj o "options"
      params <- obj o "params"
      Right (Request workload variant opts params line)
    _ -> Left "the request is not a JSON object"
  where
    str o k = case KM.lookup k o of
      Just (String s) -> Right s
      Just Null -> Right ""
      Nothing -> Right ""
      _ -> Left ("request." ++ Key.toString k ++ " is not a string")
    obj o k = case KM.lookup k o of
      Just (Object x) -> Right x
      Nothing -> Right KM.empty
      Just Null -> Right KM.empty
      _ -> Left ("request." ++ Key.toString k ++ " is not an object")

-- | A parameter the harness filled in and checked.
param :: FromJSON a => Request -> Text -> IO a
param req name = case KM.lookup (Key.fromText name) (reqParams req) of
  Nothing -> failWith Internal ("params." ++ T.unpack name ++ " is missing from the request")
  Just v -> case parseEither parseJSON v of
    Right x -> pure x
    Left e -> failWith Internal ("params." ++ T.unpack name ++ ": " ++ e)

-- | Refuses any option this workload does not know, naming it.
optionsKnown :: Request -> [Text] -> IO ()
optionsKnown req known =
  case [k | k <- map Key.toText (KM.keys (reqOptions req)), k `notElem` known] of
    [] -> pure ()
    unknown ->
      failWith Internal $
        "unknown option(s) " ++ show unknown ++ " for workload " ++ T.unpack (reqWorkload req)
          ++ " (this worker knows " ++ show known ++ ")"

-- | A boolean option, False when absent.
optionBool :: Request -> Text -> IO Bool
optionBool req name = case KM.lookup (Key.fromText name) (reqOptions req) of
  Nothing -> pure False
  Just (Bool b) -> pure b
  Just v -> failWith Internal ("option " ++ T.unpack name ++ " = " ++ BL.unpack (encode v) ++ " is not a boolean")

-- | What a workload reports: raw facts, counts, sparse histograms.
data Result = Result
  { measured :: [(Text, Value)]
  , verify :: [(Text, Int64)]
  , histograms :: [(Text, [(Int, Int64)])]
  }

emptyResult :: Result
emptyResult = Result [] [] []

say :: Value -> IO ()
say v = BL.putStr (encode v <> "\n") >> hFlush stdout

helloLine :: Text -> Text -> Value
helloLine version variant =
  object ["type" .= ("hello" :: Text), "target" .= ("ghc" :: Text), "runtime_version" .= version, "variant" .= variant]

errorLine :: Kind -> String -> Value
errorLine k msg = object ["type" .= ("error" :: Text), "kind" .= kindName k, "message" .= msg]

resultLine :: Result -> Value
resultLine r =
  object $
    [ "type" .= ("result" :: Text)
    , "measured" .= object [Key.fromText k .= v | (k, v) <- measured r]
    , "verify" .= object [Key.fromText k .= v | (k, v) <- verify r]
    ]
      ++ ["histograms" .= object [Key.fromText k .= [[toInteger i, toInteger c] | (i, c) <- h] | (k, h) <- histograms r] | not (null (histograms r))]

-- | A string option, the default when absent.
optionText :: Request -> Text -> Text -> IO Text
optionText req name def = case KM.lookup (Key.fromText name) (reqOptions req) of
  Nothing -> pure def
  Just (String s) -> pure s
  Just v -> failWith Internal ("option " ++ T.unpack name ++ " = " ++ BL.unpack (encode v) ++ " is not a string")
